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
Joint-space mass matrix by the composite-rigid-body algorithm.

The mass matrix M(q) of Craig eq. 6.59-6.60, computed as Featherstone's CRBA in 3D
vector form: walking inward, each body's composite inertia (mass ``m``, first moment
``h = m c`` and rotational inertia ``I_o`` about the body origin) is complete when the
body is reached; the force it takes to accelerate the composite along joint ``i``'s
motion axis, carried up the ancestors, gives column ``i``.  Cost: O(n d), d = depth.
"""

from numba import njit

from manip_dynamics.algorithms._jit import INNER_OPTIONS
from manip_dynamics.algorithms._vec3 import add, cross, dot, load, matvec, scale, store

_JIT = INNER_OPTIONS


@njit(**_JIT)
def crba_state(parent, kind, axis, mass, com, inertia, armature, use_armature,  # noqa: N803
               R, p, mc, hc, Ioc, M):
    """
    Fill ``M`` (n, n) for one state whose joint transforms are ``R``, ``p``.

    ``mc`` (n,), ``hc`` (n, 3), ``Ioc`` (n, 3, 3): scratch for the composite inertias.
    ``armature`` (n,) is added to the diagonal when ``use_armature``.
    """
    n = mass.shape[0]
    M[:, :] = 0.0  # entries of unrelated branches of a tree stay zero
    for i in range(n):
        m = mass[i]
        c = load(com, i)
        mc[i] = m
        store(hc, i, scale(m, c))
        cc = dot(c, c)
        for r in range(3):
            for s in range(3):
                # parallel-axis theorem, Craig eq. 6.25
                Ioc[i, r, s] = inertia[i, r, s] + m * ((cc if r == s else 0.0) - c[r] * c[s])
    for i in range(n - 1, -1, -1):
        a = load(axis, i)
        h = load(hc, i)
        if kind[i] == 0:
            fn = matvec(Ioc[i], a)       # moment about the origin
            ff = cross(a, h)             # force
        else:
            fn = cross(h, a)
            ff = scale(mc[i], a)
        M[i, i] = dot(a, fn) if kind[i] == 0 else dot(a, ff)
        if use_armature:
            M[i, i] += armature[i]
        j = i
        while parent[j] >= 0:
            Rj = R[j]
            ff = matvec(Rj, ff)
            fn = add(matvec(Rj, fn), cross(load(p, j), ff))
            j = parent[j]
            aj = load(axis, j)
            value = dot(aj, fn) if kind[j] == 0 else dot(aj, ff)
            M[i, j] = value
            M[j, i] = value
        j = parent[i]
        if j >= 0:
            # add composite i to its parent, expressed in the parent frame about its origin:
            # Ri Ioc Ri^T (symmetric: six entries, from the three rows of Ri) plus the
            # shift of the origin by pi (Craig eq. 6.25 with the first moment hr)
            Ri = R[i]
            pi = load(p, i)
            m = mc[i]
            hr = matvec(Ri, h)
            d = m * dot(pi, pi) + 2.0 * dot(pi, hr)
            I = Ioc[i]  # noqa: E741 - the inertia tensor's usual name
            r0 = (Ri[0, 0], Ri[0, 1], Ri[0, 2])
            r1 = (Ri[1, 0], Ri[1, 1], Ri[1, 2])
            r2 = (Ri[2, 0], Ri[2, 1], Ri[2, 2])
            c0 = matvec(I, r0)
            c1 = matvec(I, r1)
            c2 = matvec(I, r2)
            x01 = dot(r0, c1) - m * pi[0] * pi[1] - pi[0] * hr[1] - hr[0] * pi[1]
            x02 = dot(r0, c2) - m * pi[0] * pi[2] - pi[0] * hr[2] - hr[0] * pi[2]
            x12 = dot(r1, c2) - m * pi[1] * pi[2] - pi[1] * hr[2] - hr[1] * pi[2]
            Ioc[j, 0, 0] += dot(r0, c0) + d - m * pi[0] * pi[0] - 2.0 * pi[0] * hr[0]
            Ioc[j, 1, 1] += dot(r1, c1) + d - m * pi[1] * pi[1] - 2.0 * pi[1] * hr[1]
            Ioc[j, 2, 2] += dot(r2, c2) + d - m * pi[2] * pi[2] - 2.0 * pi[2] * hr[2]
            Ioc[j, 0, 1] += x01
            Ioc[j, 1, 0] += x01
            Ioc[j, 0, 2] += x02
            Ioc[j, 2, 0] += x02
            Ioc[j, 1, 2] += x12
            Ioc[j, 2, 1] += x12
            mc[j] += m
            store(hc, j, add(load(hc, j), add(scale(m, pi), hr)))
