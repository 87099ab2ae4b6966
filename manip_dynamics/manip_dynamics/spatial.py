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


def inertia_problem(inertia: FloatArray, tol: float = 1e-9) -> str | None:
    """
    Say why an inertia tensor about the centre of mass is not physical, if it is not.

    Checks symmetry, positive semi-definiteness (a point mass has zero inertia) and the
    triangle inequality of the principal moments (Craig sec. 6.3: ``I1 + I2 >= I3``).

    :param inertia: Inertia tensor about the centre of mass [kg m^2], shape (3, 3).
    :param tol: Relative tolerance, scaled by the largest principal moment.
    :return: ``None`` when physical, else a short description of the defect.
    """
    if not np.all(np.isfinite(inertia)):
        return 'inertia has NaN or inf entries'
    if not np.allclose(inertia, inertia.T, atol=1e-12):
        return 'inertia tensor is not symmetric'
    moments = np.linalg.eigvalsh(inertia)
    scale = max(float(np.max(np.abs(moments))), 1e-12)
    if moments[0] < -tol * scale:
        return 'inertia tensor is not positive semi-definite (principal moments %s)' % (
            np.array2string(moments, precision=6))
    i1, i2, i3 = moments
    if i1 + i2 < i3 - tol * scale:
        return ('principal moments %.6g, %.6g, %.6g violate the triangle inequality '
                'I1 + I2 >= I3' % (i1, i2, i3))
    return None


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
