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
Cartesian-space (operational-space) dynamics of one link (Craig sec. 6.10).

Craig eq. 6.90-6.99 write the dynamics of an end effector as
``F = M_x(q) xdd + V_x(q, qd) + G_x(q)`` with, for a square invertible Jacobian,
``M_x = J^-T M J^-1``, ``V_x = J^-T (V - M J^-1 dJ/dt qd)``, ``G_x = J^-T G``.  For any
number ``m`` of selected task directions we use the equivalent general form (Khatib's
operational-space formulation, identical to Craig's when J is square and invertible):

* ``Lambda = (J M^-1 J^T)^-1``                        (Cartesian mass matrix, m x m)
* ``Jbar = M^-1 J^T Lambda``                          (dynamically consistent inverse)
* ``mu = Jbar^T C qd - Lambda dJ/dt qd``              (velocity term)
* ``p = Jbar^T g``                                    (gravity term)

Near a singularity (smallest singular value of J below ``singular_threshold``, or more
task directions than joints) ``J M^-1 J^T`` is (nearly) singular; ``Lambda`` is then the
damped inverse ``(J M^-1 J^T + damping^2 1)^-1`` and the result says ``near_singular``.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

DIRECTION_NAMES = ('x', 'y', 'z', 'rx', 'ry', 'rz')


@dataclass(frozen=True)
class CartesianDynamics:
    """
    Operational-space terms of a link for the selected task directions.

    ``jacobian`` (m, n) maps qd to the selected twist components [m/s, rad/s];
    ``mass_matrix`` (m, m) [kg, kg m^2]; ``velocity_term`` and ``gravity_term`` (m,)
    [N, N m]; ``directions`` names the rows (``x y z rx ry rz``); ``frame`` is 'world'
    (root axes) or 'link' (link axes); the reference point is the link origin.
    """

    link: str
    frame: str
    directions: tuple[str, ...]
    jacobian: FloatArray
    mass_matrix: FloatArray
    velocity_term: FloatArray
    gravity_term: FloatArray
    near_singular: bool
    min_singular_value: float


def operational_space_terms(jacobian: FloatArray, mass_matrix: FloatArray,
                            coriolis_torques: FloatArray, gravity_torques: FloatArray,
                            jdot_qd: FloatArray, singular_threshold: float, damping: float
                            ) -> tuple[FloatArray, FloatArray, FloatArray, bool, float]:
    """
    Return ``(Lambda, mu, p, near_singular, min_singular_value)``; see the module doc.

    :param jacobian: Selected rows of the link Jacobian, shape (m, n).
    :param mass_matrix: Joint-space mass matrix M(q), shape (n, n).
    :param coriolis_torques: ``C(q, qd) qd`` [N m], shape (n,).
    :param gravity_torques: ``g(q)`` [N m], shape (n,).
    :param jdot_qd: Selected rows of ``dJ/dt qd``, shape (m,).
    :param singular_threshold: Smallest acceptable singular value of the Jacobian.
    :param damping: Damping factor of the inverse near singularities.
    """
    m, n = jacobian.shape
    svals = np.linalg.svd(jacobian, compute_uv=False)
    smin = float(svals[-1]) if m <= n else 0.0
    near = smin < singular_threshold
    minv_jt = np.linalg.solve(mass_matrix, jacobian.T)
    a = jacobian @ minv_jt
    a = 0.5 * (a + a.T)
    if near:
        a = a + damping ** 2 * np.eye(m)
    lam = np.linalg.solve(a, np.eye(m))
    lam = 0.5 * (lam + lam.T)
    jbar = minv_jt @ lam
    mu = jbar.T @ coriolis_torques - lam @ jdot_qd
    p = jbar.T @ gravity_torques
    return lam, mu, p, near, smin
