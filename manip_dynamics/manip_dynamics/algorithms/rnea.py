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
import numpy as np

from manip_dynamics.algorithms._jit import JIT_OPTIONS
from manip_dynamics.algorithms._vec3 import add, cross, dot, load, matvec, scale, store, sub
from manip_dynamics.algorithms.kinematics import (
    first_non_finite, joint_transforms, outward_pass)

_JIT = JIT_OPTIONS


@njit(**_JIT)
def rnea_state(parent, kind, axis, mass, com, inertia, base_acc, R, p, qd, qdd,  # noqa: N803
               fext, w, wd, vd, f, t, out):
    """
    Compute the joint torques of one state whose joint transforms are in ``R``, ``p``.

    ``fext`` (n, 6): the wrench ``[f; tau]`` the environment applies to each body, body
    frame, about the body origin.  ``f``, ``t``, ``w``, ``wd``, ``vd``: (n, 3) scratch.
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
        store(f, i, sub(F, (fext[i, 0], fext[i, 1], fext[i, 2])))
        store(t, i, sub(add(N, cross(c, F)), (fext[i, 3], fext[i, 4], fext[i, 5])))
    for i in range(n - 1, -1, -1):
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
def rnea(parent, kind, axis, R_tree, p_tree, mass, com, inertia, base_acc,  # noqa: N803
         q, qd, qdd, fext, out):
    """
    Inverse dynamics of a batch of states.

    :param q: Joint positions, shape (N, n); likewise ``qd``, ``qdd``.
    :param fext: Body wrenches, shape (1, n, 6) shared by all states or (N, n, 6).
    :param out: Torques written here, shape (N, n).
    :return: 0, or ``1 + 3 k + a`` when state ``k`` has a non-finite entry in argument
        ``a`` (0 q, 1 qd, 2 qdd); ``out`` is then incomplete.
    """
    N, n = q.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    w = np.empty((n, 3))
    wd = np.empty((n, 3))
    vd = np.empty((n, 3))
    f = np.empty((n, 3))
    t = np.empty((n, 3))
    shared = fext.shape[0] == 1
    for k in range(N):
        code = first_non_finite(q[k], qd[k], qdd[k])
        if code:
            return code + 3 * k
        joint_transforms(kind, axis, R_tree, p_tree, q[k], R, p)
        rnea_state(parent, kind, axis, mass, com, inertia, base_acc, R, p, qd[k], qdd[k],
                   fext[0] if shared else fext[k], w, wd, vd, f, t, out[k])
    return 0


@njit(**_JIT)
def rnea_single(parent, kind, axis, R_tree, p_tree, mass, com, inertia, base_acc,  # noqa: N803
                q, qd, qdd, fext, out):
    """
    Inverse dynamics of one state: ``q``, ``qd``, ``qdd``, ``out`` shape (n,), ``fext`` (n, 6).

    The facade's fast path for control loops (no batch bookkeeping).
    :return: 0, or 1 + the index of the first non-finite argument (0 q, 1 qd, 2 qdd).
    """
    code = first_non_finite(q, qd, qdd)
    if code:
        return code
    n = q.shape[0]
    R = np.empty((n, 3, 3))
    work = np.empty((6, n, 3))
    joint_transforms(kind, axis, R_tree, p_tree, q, R, work[0])
    rnea_state(parent, kind, axis, mass, com, inertia, base_acc, R, work[0], qd, qdd, fext,
               work[1], work[2], work[3], work[4], work[5], out)
    return 0
