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
The model packed into two contiguous arrays, the arguments of every entry kernel.

``ints`` (2 n,) int64 holds ``parent`` then ``kind`` (0 revolute, 1 prismatic); ``flat``
(38 n,) float64 holds, one block after the other, ``axis`` (n, 3), ``R_tree`` (n, 3, 3),
``p_tree`` (n, 3), ``mass`` (n,), ``com`` (n, 3), ``inertia`` (n, 3, 3) and ``armature``
(n,), each C-ordered.  Passing two arrays instead of nine keeps the per-call cost of a
compiled call low; :func:`unpack` returns the nine views inside a kernel at no cost.  A
payload change builds a new ``flat`` and swaps the reference, so a call in flight keeps
reading a consistent model.
"""

from numba import njit
import numpy as np
from numpy.lib.stride_tricks import as_strided
from numpy.typing import NDArray

from manip_dynamics.algorithms._jit import INNER_OPTIONS

#: Float64 entries per joint in ``flat``.
FLOATS_PER_JOINT = 38


def pack(parent: NDArray[np.int64], kind: NDArray[np.int64], axis: NDArray[np.float64],
         R_tree: NDArray[np.float64], p_tree: NDArray[np.float64],  # noqa: N803
         mass: NDArray[np.float64], com: NDArray[np.float64], inertia: NDArray[np.float64],
         armature: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """
    Return ``(ints, flat)`` for the tree and inertial arrays (shapes as in the module doc).

    :param armature: Rotor inertia per joint [kg m^2 or kg], (n,), added to M's diagonal
        by the kernels that are asked to.
    """
    ints = np.ascontiguousarray(np.concatenate((parent, kind)), dtype=np.int64)
    flat = np.concatenate([np.asarray(a, dtype=np.float64).reshape(-1) for a in (
        axis, R_tree, p_tree, mass, com, inertia, armature)])
    return ints, np.ascontiguousarray(flat)


# inlined into each caller: numba then prunes the reference counting of the nine views
# (about 0.1 us per call)
@njit(**INNER_OPTIONS, inline='always')
def unpack(ints, flat):
    """Return ``parent, kind, axis, R_tree, p_tree, mass, com, inertia, armature`` views."""
    n = ints.shape[0] // 2
    o1 = 3 * n
    o2 = o1 + 9 * n
    o3 = o2 + 3 * n
    o4 = o3 + n
    o5 = o4 + 3 * n
    o6 = o5 + 9 * n
    # as_strided, not reshape: the same views at half the per-call cost (reshape calls a
    # C helper; about 100 ns per kernel call on 7 joints, measured)
    vec3 = (24, 8)  # strides [bytes] of a C-ordered (n, 3) float64 block
    mat3 = (72, 24, 8)  # of a C-ordered (n, 3, 3) block
    return (ints[:n], ints[n:], as_strided(flat[:o1], (n, 3), vec3),
            as_strided(flat[o1:o2], (n, 3, 3), mat3), as_strided(flat[o2:o3], (n, 3), vec3),
            flat[o3:o4], as_strided(flat[o4:o5], (n, 3), vec3),
            as_strided(flat[o5:o6], (n, 3, 3), mat3), flat[o6:o6 + n])
