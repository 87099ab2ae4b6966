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
Load-time 3D and spatial algebra helpers (plain numpy, not on the hot path).

Conventions: rotation matrices ``R_a_b`` map coordinates in frame ``b`` to frame ``a``;
homogeneous transforms ``T_a_b`` (4, 4) likewise.  Inertia tensors are (3, 3) matrices in
kg m^2.  The numba kernels in :mod:`manip_dynamics.algorithms` have their own scalar-level
helpers; this module serves the model builder, the facade and tests.
"""

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]


def skew(v: ArrayLike) -> FloatArray:
    """
    Return the cross-product matrix of a 3-vector.

    :param v: Vector, shape (3,).
    :return: ``[v]x``, shape (3, 3), such that ``skew(v) @ u == cross(v, u)``.
    """
    x, y, z = np.asarray(v, dtype=np.float64)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rpy_to_matrix(rpy: ArrayLike) -> FloatArray:
    """
    Return the rotation matrix of URDF roll-pitch-yaw angles.

    URDF convention: fixed-axis rotations about x (roll), then y (pitch), then z (yaw),
    i.e. ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``.

    :param rpy: ``(roll, pitch, yaw)`` [rad].
    :return: Rotation matrix, shape (3, 3).
    """
    r, p, y = np.asarray(rpy, dtype=np.float64)
    cr, sr = np.cos(r), np.sin(r)
    cp, sp = np.cos(p), np.sin(p)
    cy, sy = np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def axis_angle_matrix(axis: ArrayLike, angle: float) -> FloatArray:
    """
    Return the rotation by ``angle`` about the unit vector ``axis`` (Rodrigues' formula).

    :param axis: Unit rotation axis, shape (3,).
    :param angle: Rotation angle [rad].
    :return: Rotation matrix, shape (3, 3).
    """
    k = skew(axis)
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def make_transform(rotation: ArrayLike, translation: ArrayLike) -> FloatArray:
    """
    Build a homogeneous transform from a rotation and a translation.

    :param rotation: Rotation matrix ``R_a_b``, shape (3, 3).
    :param translation: Origin of ``b`` expressed in ``a`` [m], shape (3,).
    :return: ``T_a_b``, shape (4, 4).
    """
    t = np.eye(4)
    t[:3, :3] = rotation
    t[:3, 3] = translation
    return t


def inertia_from_urdf(ixx: float, ixy: float, ixz: float,
                      iyy: float, iyz: float, izz: float) -> FloatArray:
    """
    Return the symmetric inertia tensor of the six URDF inertia values.

    :return: Inertia tensor [kg m^2], shape (3, 3).
    """
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=np.float64)


#: Relative tolerance of the inertia checks, scaled by the largest principal moment: a
#: defect smaller than this is floating-point round-off of a valid inertia.
INERTIA_TOLERANCE = 1e-9

#: Absolute floor of that tolerance [kg m^2]: moments that are all zero up to round-off
#: (e.g. -1e-20, 0, 1e-20) describe a point mass, which is physical.
INERTIA_FLOOR = 1e-15


@dataclass(frozen=True)
class InertiaDefect:
    """
    Why an inertia tensor about the centre of mass is physically suspect.

    ``kind`` is ``'not positive semi-definite'`` (a negative principal moment) or
    ``'triangle inequality'`` (``I1 + I2 < I3``, Craig sec. 6.3: no rigid body has these
    moments).  ``moments`` (3,) are the principal moments [kg m^2], ascending;
    ``deficit`` [kg m^2] is ``-I1`` or ``I3 - I1 - I2``; ``nearest`` (3, 3) is a valid tensor
    close to the given one (same principal axes, see :func:`nearest_valid_inertia`).
    """

    kind: str
    moments: FloatArray
    deficit: float
    nearest: FloatArray

    def describe(self) -> str:
        """Return what is wrong, with the numbers, e.g. for a warning or an error."""
        i1, i2, i3 = (float(m) for m in self.moments)
        text = 'principal moments %.6g, %.6g, %.6g kg m^2' % (i1, i2, i3)
        if self.kind == 'triangle inequality':
            share = 100.0 * self.deficit / i3 if i3 > 0.0 else math.inf
            return ('%s violate the triangle inequality I1 + I2 >= I3 by %.3g kg m^2 (%.3g %% '
                    'of I3): no rigid body has this inertia' % (text, self.deficit, share))
        return ('inertia tensor is not positive semi-definite: %s, the smallest is negative '
                '(often a sign flipped on ixy, ixz or iyz)' % text)

    def suggestion(self) -> str:
        """Return the nearest valid URDF values, e.g. ``ixx="..." ... izz="..."``."""
        t = self.nearest
        return ' '.join('%s="%.10g"' % (key, t[i, j]) for key, (i, j) in (
            ('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)),
            ('iyz', (1, 2)), ('izz', (2, 2))))


def nearest_valid_inertia(inertia: FloatArray) -> FloatArray:
    """
    Return a physically valid inertia tensor close to a suspect one, same principal axes.

    Negative principal moments are raised to ``1e-6`` of the largest; then, if the triangle
    inequality ``I1 + I2 >= I3`` fails by ``d``, the moments move by ``(+d/3, +d/3, -d/3)``
    (the Euclidean projection onto the plane ``I1 + I2 = I3``) plus a margin of ``1e-6 I3``
    so that the result passes the checks after rounding to 10 digits.

    :param inertia: Symmetric inertia tensor [kg m^2], shape (3, 3).
    :return: A tensor with non-negative principal moments that satisfy the triangle
        inequality [kg m^2], shape (3, 3).
    """
    moments, axes = np.linalg.eigh(inertia)
    largest = max(float(np.max(np.abs(moments))), 1e-12)
    fixed = np.maximum(moments, 1e-6 * largest)
    order = np.argsort(fixed)
    i1, i2, i3 = fixed[order]
    deficit = i3 - i1 - i2
    if deficit > -1e-6 * i3:
        step = (deficit + 1e-6 * i3) / 3.0
        fixed[order] = (i1 + step, i2 + step, i3 - step)
    nearest = axes @ np.diag(fixed) @ axes.T
    return 0.5 * (nearest + nearest.T)


def inertia_defect(inertia: FloatArray, tol: float = INERTIA_TOLERANCE
                   ) -> InertiaDefect | None:
    """
    Check the principal moments of a finite, symmetric inertia tensor about its centre of mass.

    Positive semi-definiteness (a point mass has zero inertia) and the triangle inequality of
    the principal moments (Craig sec. 6.3: ``I1 + I2 >= I3``), both within ``tol`` times the
    largest principal moment or :data:`INERTIA_FLOOR`, whichever is larger.

    :param inertia: Symmetric inertia tensor [kg m^2], shape (3, 3), finite.
    :param tol: Relative tolerance.
    :return: ``None`` when physically valid, else the defect with a suggested correction.
    """
    moments = np.linalg.eigvalsh(inertia)
    margin = max(tol * float(np.max(np.abs(moments))), INERTIA_FLOOR)
    if moments[0] < -margin:
        return InertiaDefect('not positive semi-definite', moments, float(-moments[0]),
                             nearest_valid_inertia(inertia))
    i1, i2, i3 = (float(m) for m in moments)
    if i1 + i2 < i3 - margin:
        return InertiaDefect('triangle inequality', moments, i3 - i1 - i2,
                             nearest_valid_inertia(inertia))
    return None


def inertia_problem(inertia: FloatArray, tol: float = INERTIA_TOLERANCE) -> str | None:
    """
    Say why an inertia tensor about the centre of mass is not physical, if it is not.

    Checks finiteness, symmetry and :func:`inertia_defect` (positive semi-definiteness and
    the triangle inequality of the principal moments, Craig sec. 6.3).

    :param inertia: Inertia tensor about the centre of mass [kg m^2], shape (3, 3).
    :param tol: Relative tolerance, scaled by the largest principal moment.
    :return: ``None`` when physical, else a short description of the defect.
    """
    if not np.all(np.isfinite(inertia)):
        return 'inertia has NaN or inf entries'
    if not np.allclose(inertia, inertia.T, atol=1e-12):
        return 'inertia tensor is not symmetric'
    defect = inertia_defect(inertia, tol)
    return None if defect is None else defect.describe()


def shift_inertia_to_point(mass: float, com: FloatArray, inertia_com: FloatArray) -> FloatArray:
    """
    Return the inertia about a frame's origin of a body given about its centre of mass.

    Parallel-axis theorem (Craig eq. 6.25): ``I_o = I_c + m (c.c 1 - c c^T)``.

    :param mass: Body mass [kg].
    :param com: Centre of mass in the frame [m], shape (3,).
    :param inertia_com: Inertia about the centre of mass, frame axes [kg m^2], (3, 3).
    :return: Inertia about the frame origin, frame axes [kg m^2], (3, 3).
    """
    c = np.asarray(com, dtype=np.float64)
    return inertia_com + mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))


def spatial_inertia(mass: float, com: ArrayLike, inertia_com: ArrayLike) -> FloatArray:
    """
    Return the 6x6 spatial inertia about a frame's origin, motion layout ``[w; v]``.

    With ``h = m c``: ``[[I_o, [h]x], [[h]x^T, m 1]]`` so that the momentum
    ``[L_o; p] = I [w; v_o]``.

    :param mass: Body mass [kg].
    :param com: Centre of mass in the frame [m], shape (3,).
    :param inertia_com: Inertia about the centre of mass, frame axes [kg m^2], (3, 3).
    :return: Spatial inertia, shape (6, 6).
    """
    c = np.asarray(com, dtype=np.float64)
    h = skew(mass * c)
    out = np.zeros((6, 6))
    out[:3, :3] = shift_inertia_to_point(mass, c, np.asarray(inertia_com, dtype=np.float64))
    out[:3, 3:] = h
    out[3:, :3] = h.T
    out[3:, 3:] = mass * np.eye(3)
    return out
