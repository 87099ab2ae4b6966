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
Scalar-level 3-vector helpers for the numba kernels.

Vectors are tuples of three floats so that numba keeps them in registers: no heap
allocation happens inside the kernels' inner loops.  Matrices are (3, 3) array views.
"""

from numba import njit

from manip_dynamics.algorithms._jit import INNER_OPTIONS

_JIT = INNER_OPTIONS


@njit(**_JIT)
def load(a, i):
    """Return row ``i`` of an (n, 3) array as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@njit(**_JIT)
def load_or(a, i, default):
    """Return row ``i`` of the (n, 3) array ``a``, or the 3-tuple ``default`` when i < 0."""
    if i < 0:
        return default
    return load(a, i)


@njit(**_JIT)
def store(a, i, v):
    """Write tuple ``v`` into row ``i`` of an (n, 3) array."""
    a[i, 0] = v[0]
    a[i, 1] = v[1]
    a[i, 2] = v[2]


@njit(**_JIT)
def add(a, b):
    """Return ``a + b``."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(**_JIT)
def sub(a, b):
    """Return ``a - b``."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(**_JIT)
def scale(s, a):
    """Return ``s * a``."""
    return (s * a[0], s * a[1], s * a[2])


@njit(**_JIT)
def dot(a, b):
    """Return ``a . b``."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(**_JIT)
def cross(a, b):
    """Return ``a x b``."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(**_JIT)
def matvec(m, v):
    """Return ``m @ v`` for a (3, 3) array ``m``."""
    return (m[0, 0] * v[0] + m[0, 1] * v[1] + m[0, 2] * v[2],
            m[1, 0] * v[0] + m[1, 1] * v[1] + m[1, 2] * v[2],
            m[2, 0] * v[0] + m[2, 1] * v[1] + m[2, 2] * v[2])


@njit(**_JIT)
def matTvec(m, v):  # noqa: N802 - maths name
    """Return ``m.T @ v`` for a (3, 3) array ``m``."""
    return (m[0, 0] * v[0] + m[1, 0] * v[1] + m[2, 0] * v[2],
            m[0, 1] * v[0] + m[1, 1] * v[1] + m[2, 1] * v[2],
            m[0, 2] * v[0] + m[1, 2] * v[1] + m[2, 2] * v[2])
