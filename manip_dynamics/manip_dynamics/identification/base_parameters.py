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
Base parameters: the combinations of standard parameters that joint torques can identify.

Some standard parameters never affect the torques (link 1's ``Ixx`` on a vertical first
axis) and others only in fixed linear combinations (a body's mass with its child's, moved
along the joint axis).  Following Gautier's numerical method (Gautier 1990, "Numerical
calculation of the base inertial parameters of robots"; Khalil and Dombre sec. 12.3.3;
Siciliano and Khatib, *Springer Handbook of Robotics*, ch. "Model identification", sec. on
identifiable parameters), a regressor ``W`` stacked over random states is decomposed by QR
with column pivoting, ``W P = Q [R1 R2]``; the first ``r = rank W`` pivoted columns are
independent and the others satisfy ``W2 = W1 beta`` with ``beta = R1^-1 R2``.  Hence
``W pi = W1 pi_b`` with the base parameters ``pi_b = pi_1 + beta pi_2 = K pi``.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
import scipy.linalg

from manip_dynamics.identification.regressor import (
    parameter_count, parameter_names, regressor)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class BaseParameters:
    """
    The identifiable parameter combinations of a model.

    ``independent`` (r,): indices into ``pi`` of the standard parameters kept as base
    columns; ``dependent`` (p - r,): the others; ``beta`` (r, p - r): ``W_dep = W_ind beta``;
    ``K`` (r, p): ``pi_b = K pi``; ``names`` (r,): each base parameter in words, e.g.
    ``'I2zz + 0.0998 m3 + ...'``; ``standard_names`` (p,): the names of ``pi``'s entries;
    ``friction``, ``armature``: whether ``pi`` includes those blocks.
    """

    independent: IntArray
    dependent: IntArray
    beta: FloatArray
    K: FloatArray
    names: tuple[str, ...]
    standard_names: tuple[str, ...]
    friction: bool
    armature: bool

    @property
    def count(self) -> int:
        """Return the number r of base parameters."""
        return int(self.independent.shape[0])

    def base_values(self, params: FloatArray) -> FloatArray:
        """Return ``pi_b = K pi`` for standard parameters ``pi`` (p,) or (M, p)."""
        return np.asarray(params, dtype=np.float64) @ self.K.T

    def base_regressor(self, full: FloatArray) -> FloatArray:
        """Return the base columns ``W1`` of a full regressor (..., p) -> (..., r)."""
        return np.asarray(full)[..., self.independent]


def random_states(model, count: int, seed: int = 0) -> tuple[FloatArray, ...]:
    """
    Return ``count`` random states ``(q, qd, qdd)``, each (count, n).

    Positions are uniform within the joint limits (``[-pi, pi]`` when unlimited),
    velocities and accelerations standard normal.
    """
    rng = np.random.default_rng(seed)
    n = model.dof
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    q = lo + (hi - lo) * rng.random((count, n))
    return q, rng.normal(size=(count, n)), rng.normal(size=(count, n))


def _format_name(head: str, coefficients: list[tuple[float, str]]) -> str:
    text = head
    for value, name in coefficients:
        sign = '-' if value < 0 else '+'
        mag = abs(value)
        text += ' %s %s' % (sign, name if abs(mag - 1.0) < 1e-9 else '%.4g %s' % (mag, name))
    return text


def base_parameters(model, *, friction: bool = False, armature: bool = False,
                    samples: int | None = None, seed: int = 0,
                    tolerance: float = 1e-8) -> BaseParameters:
    """
    Compute the base parameters of a model by QR with column pivoting (Gautier 1990).

    :param model: A :class:`~manip_dynamics.RobotModel` (only its kinematics matter).
    :param friction: Include the friction block of ``pi`` (always identifiable when the
        joint moves).
    :param armature: Include the armature block.
    :param samples: Random states stacked (default ``max(50, 2 p / n)``).
    :param seed: Random seed of the states (the result does not depend on it beyond
        round-off).
    :param tolerance: Relative threshold on ``|R_ii| / |R_00|`` below which a pivoted
        column is dependent.
    :return: A :class:`BaseParameters`.
    """
    n = model.dof
    p = parameter_count(n, friction=friction, armature=armature)
    count = samples if samples is not None else max(50, 2 * p // max(n, 1))
    q, qd, qdd = random_states(model, count, seed)
    w = regressor(model, q, qd, qdd, friction=friction, armature=armature).reshape(-1, p)
    # Scale columns to unit norm so that the rank decision does not depend on units; the
    # dependency coefficients are computed on the unscaled columns below.
    norms = np.linalg.norm(w, axis=0)
    usable = norms > 1e-12 * max(float(norms.max()), 1e-300)
    scaled = np.where(usable, w / np.where(usable, norms, 1.0), 0.0)
    _, r_mat, perm = scipy.linalg.qr(scaled, mode='economic', pivoting=True)
    diag = np.abs(np.diag(r_mat))
    rank = int(np.sum(diag > tolerance * diag[0]))
    independent = np.array(perm[:rank], dtype=np.int64)
    # keep the standard order inside the base set: easier to read
    independent.sort()
    dependent = np.array(sorted(set(range(p)) - set(independent.tolist())), dtype=np.int64)
    w1 = w[:, independent]
    w2 = w[:, dependent]
    beta = np.linalg.lstsq(w1, w2, rcond=None)[0] if dependent.size else np.zeros((rank, 0))
    beta[np.abs(beta) < 1e-10 * max(1.0, float(np.max(np.abs(beta), initial=0.0)))] = 0.0
    k_map = np.zeros((rank, p))
    k_map[np.arange(rank), independent] = 1.0
    k_map[:, dependent] = beta
    names_std = parameter_names(n, friction=friction, armature=armature)
    names = []
    for row in range(rank):
        coefficients = [(float(beta[row, c]), names_std[dependent[c]])
                        for c in range(dependent.size) if beta[row, c] != 0.0]
        names.append(_format_name(names_std[independent[row]], coefficients))
    return BaseParameters(independent=independent, dependent=dependent, beta=beta, K=k_map,
                          names=tuple(names), standard_names=tuple(names_std),
                          friction=friction, armature=armature)
