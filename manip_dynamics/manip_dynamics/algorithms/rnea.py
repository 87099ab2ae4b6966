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
Inverse dynamics by the recursive Newton-Euler algorithm (Craig sec. 6.5).

Outward iterations (Craig eq. 6.45-6.50): angular velocity and acceleration, linear
acceleration of each link origin and centre of mass, then the Newton and Euler equations
``F = m vdot_c`` and ``N = I_c wdot + w x I_c w``.  Inward iterations (Craig eq. 6.51-6.53):
the force and moment each link exerts on its child(ren), projected on the joint axis.
Gravity enters as an upward acceleration of the base (Craig sec. 6.5).  Kinematic trees:
the inward pass adds every child's force to its parent.  Cost: O(n).
"""

from numba import njit

from manip_dynamics.algorithms._jit import INNER_OPTIONS
from manip_dynamics.algorithms._vec3 import (
    add, cross, dot, load, load_or, matTvec, matvec, scale, store, sub)
from manip_dynamics.algorithms.kinematics import outward_pass

_JIT = INNER_OPTIONS


@njit(**_JIT)
def rnea_state(parent, kind, axis, mass, com, inertia, base_acc, R, p, qd, qdd,  # noqa: N803
               fext, use_fext, w, wd, vd, f, t, out):
    """
    Compute the joint torques of one state whose joint transforms are in ``R``, ``p``.

    ``fext`` (n, 6), read when ``use_fext``: the wrench ``[f; tau]`` the environment
    applies to each body, body frame, about the body origin.  ``f``, ``t``, ``w``, ``wd``,
    ``vd``: (n, 3) scratch.
    """
    n = qd.shape[0]
    outward_pass(parent, kind, axis, R, p, base_acc, qd, qdd, w, wd, vd)
    for i in range(n):
        wi = load(w, i)
        wdi = load(wd, i)
        c = load(com, i)
        # Craig eq. 6.48: acceleration of the centre of mass
        vdc = add(add(cross(wdi, c), cross(wi, cross(wi, c))), load(vd, i))
        m = mass[i]
        F = scale(m, vdc)
        Ic = inertia[i]
        # Craig eq. 6.49-6.50: Newton and Euler equations
        N = add(matvec(Ic, wdi), cross(wi, matvec(Ic, wi)))
        T = add(N, cross(c, F))
        if use_fext:
            F = sub(F, (fext[i, 0], fext[i, 1], fext[i, 2]))
            T = sub(T, (fext[i, 3], fext[i, 4], fext[i, 5]))
        store(f, i, F)
        store(t, i, T)
    inward_pass(parent, kind, axis, R, p, f, t, out)


@njit(**_JIT)
def inward_pass(parent, kind, axis, R, p, f, t, out):  # noqa: N803
    """
    Sum the bodies' forces ``f`` and moments ``t`` (n, 3) inward; joint torques to ``out``.

    Craig eq. 6.51-6.53; ``f`` and ``t`` hold each body's own on entry and what it
    transmits to its parent on exit.
    """
    for i in range(out.shape[0] - 1, -1, -1):
        a = load(axis, i)
        fi = load(f, i)
        ti = load(t, i)
        # Craig eq. 6.53 (revolute) and its prismatic form tau = f . Z
        out[i] = dot(ti, a) if kind[i] == 0 else dot(fi, a)
        j = parent[i]
        if j >= 0:
            # Craig eq. 6.51-6.52: the child's force and moment seen in the parent frame
            Rf = matvec(R[i], fi)
            store(f, j, add(load(f, j), Rf))
            store(t, j, add(add(load(t, j), matvec(R[i], ti)), cross(load(p, i), Rf)))


@njit(**_JIT)
def still_pair_state(parent, kind, axis, mass, com, inertia, base_acc, R, p, qdd,  # noqa: N803
                     wd, vd, g, f, t, out_inertial, out_gravity):
    """
    Joint torques of an arm at rest: ``M(q) qdd`` and ``g(q)``, sharing the transforms.

    ``out_inertial`` gets the torques for accelerations ``qdd`` with the root at rest,
    ``out_gravity`` those for the root acceleration ``base_acc`` with no joint motion.
    With no velocity, Craig eq. 6.45-6.50 lose every term in w; with no joint
    acceleration either, only the root's acceleration rotated outward is left (wd = 0,
    ``F = m vd``, ``N = 0``). ``wd``, ``vd``, ``g``, ``f``, ``t``: (n, 3) scratch.
    """
    n = qdd.shape[0]
    rest = (0.0, 0.0, 0.0)
    root = (base_acc[0], base_acc[1], base_acc[2])
    for i in range(n):
        j = parent[i]
        wd_p = load_or(wd, j, rest)
        vd_p = load_or(vd, j, rest)
        g_p = load_or(g, j, root)
        Ri = R[i]
        a = load(axis, i)
        wd_c = matTvec(Ri, wd_p)
        vd_c = matTvec(Ri, add(cross(wd_p, load(p, i)), vd_p))
        if kind[i] == 0:
            store(wd, i, add(wd_c, scale(qdd[i], a)))
            store(vd, i, vd_c)
        else:
            store(wd, i, wd_c)
            store(vd, i, add(vd_c, scale(qdd[i], a)))
        store(g, i, matTvec(Ri, g_p))
    for i in range(n):
        wdi = load(wd, i)
        c = load(com, i)
        F = scale(mass[i], add(cross(wdi, c), load(vd, i)))
        store(f, i, F)
        store(t, i, add(matvec(inertia[i], wdi), cross(c, F)))
    inward_pass(parent, kind, axis, R, p, f, t, out_inertial)
    for i in range(n):
        c = load(com, i)
        F = scale(mass[i], load(g, i))
        store(f, i, F)
        store(t, i, cross(c, F))
    inward_pass(parent, kind, axis, R, p, f, t, out_gravity)
