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
Joint PD gains for a real-time loop with a stated delay margin (joint_trajectory_controller).

A decentralized PD loop ``u = p e + d (qd_d - qd) + effort_d`` (joint_trajectory_controller
on the effort interface, the model's torque as feed-forward ``effort_d``) around a coupled
arm: linearized about a pose with the feed-forward cancelling gravity and the velocity
terms, the error obeys ``M(q) e'' = -P e - D e'`` (Craig eq. 6.59 with sec. 10.6's
partitioned law, ``M`` with the rotor inertia). The loop runs at ``update_rate`` with a
zero-order hold, and its measurement is ``delay`` update cycles old (topic hops between the
hardware and controller_manager, a non-real-time machine's jitter). Per period ``T``:

    x_{k+1} = A x_k + B u_k,   A = [[I, T I], [0, I]],   B = [[T^2/2 M^-1], [T M^-1]],
    u_k = -[P, D] x_{k-delay}

and the loop is stable when the spectral radius of that delayed system is below 1
(:func:`spectral_radius`).

:func:`design_joint_gains` chooses ``p_i = m_i w^2`` and ``d_i = 2 zeta sqrt(p_i m_i)``
per joint, ``m_i = 1 / max_poses (M^-1)_ii`` (the smallest inertia joint i moves with the
others free, over poses across the joint range, not one pose), with a stiffness floor for
light joints (full effort at ``floor_error``, but at most :data:`FLOOR_CAP` x ``m_i w^2``),
``zeta = 1`` (critically damped at the lightest pose), and the bandwidth ``w`` the largest
whose worst spectral radius over those poses stays below 1 at :data:`DELAY_MARGIN` times
the delay budget: the gains tolerate twice the delay they are designed for. Constant joint
gains on an arm whose inertia varies over its range are underdamped at the heavy poses
(more damping costs bandwidth under delay): :attr:`JointGains.damping_ratio` says how much.
"""

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

#: Default delay budget [s]: two topic hops between a hardware interface and the
#: controller_manager plus a loaded non-real-time machine's jitter (4 cycles at 250 Hz).
DEFAULT_DELAY_BUDGET = 0.016
#: Default stiffness floor: full effort at this error [rad or m] (``p_i >= effort_i / this``).
DEFAULT_FLOOR_ERROR = 1.0
#: The floor raises a joint's stiffness to at most this many times ``m_i w^2``: a light
#: joint's loop is limited by the delay like any other (its own bandwidth at most
#: sqrt(this) x ``w``).
FLOOR_CAP = 2.0
#: Poses sampled across the joint range besides the start pose.
DEFAULT_POSES = 12
#: The gains are designed stable up to this many times the delay budget.
DELAY_MARGIN = 2


@dataclass(frozen=True)
class JointGains:
    """PD gains per joint (model order) and what they were designed for."""

    #: Stiffness per joint [N m/rad or N/m], shape (n,).
    p: FloatArray
    #: Damping per joint [N m s/rad or N s/m], shape (n,).
    d: FloatArray
    #: The bandwidth chosen [rad/s] and the damping factor.
    bandwidth: float
    zeta: float
    #: The delay budget [update cycles] and the update rate [Hz].
    delay_cycles: int
    update_rate: float
    #: The worst spectral radius over the poses at the delay budget (< 1: stable).
    spectral_radius: float
    #: The least damping ratio of the coupled arm's modes over the poses (no delay).
    damping_ratio: float
    #: The largest delay [cycles] at which every pose is still stable (searched up to
    #: 2 x DELAY_MARGIN x the budget, that value when it is stable there too).
    delay_margin_cycles: int


def spectral_radius(mass_matrix: ArrayLike, p: ArrayLike, d: ArrayLike, update_rate: float,
                    delay_cycles: int) -> float:
    """
    Return the spectral radius of the sampled PD loop about one pose (module docstring).

    :param mass_matrix: ``M(q)`` with rotor inertia [kg m^2 or kg], shape (n, n).
    :param p: Stiffness per joint [N m/rad or N/m], shape (n,).
    :param d: Damping per joint [N m s/rad or N s/m], shape (n,).
    :param update_rate: Loop rate [Hz], > 0.
    :param delay_cycles: Age of the measurement [update cycles], >= 0.
    :return: The largest eigenvalue magnitude of the closed loop (< 1: stable).
    """
    m_inv = np.linalg.inv(np.asarray(mass_matrix, dtype=np.float64))
    n = m_inv.shape[0]
    period = 1.0 / float(update_rate)
    eye = np.eye(n)
    a = np.block([[eye, period * eye], [np.zeros((n, n)), eye]])
    b = np.vstack([0.5 * period * period * m_inv, period * m_inv])
    gain = np.hstack([np.diag(np.asarray(p, dtype=np.float64)),
                      np.diag(np.asarray(d, dtype=np.float64))])
    if delay_cycles == 0:
        return float(np.max(np.abs(np.linalg.eigvals(a - b @ gain))))
    # state [x_k, v_{k-1}, ..., v_{k-delay}] with v_k = -[P, D] x_k the command computed
    # from x_k and applied delay cycles later
    size = 2 * n + n * delay_cycles
    closed = np.zeros((size, size))
    closed[:2 * n, :2 * n] = a
    closed[:2 * n, size - n:] = b
    closed[2 * n:3 * n, :2 * n] = -gain
    for k in range(1, delay_cycles):
        closed[2 * n + k * n:2 * n + (k + 1) * n, 2 * n + (k - 1) * n:2 * n + k * n] = eye
    return float(np.max(np.abs(np.linalg.eigvals(closed))))


def damping_ratio(mass_matrix: ArrayLike, p: ArrayLike, d: ArrayLike) -> float:
    """
    Return the least damping ratio of the continuous loop ``M e'' = -P e - D e'``.

    The modes of the coupled arm: eigenvalues ``s`` of ``[[0, I], [-M^-1 P, -M^-1 D]]``,
    each with ratio ``-Re(s) / |s|`` (1 for a real pole).
    """
    m_inv = np.linalg.inv(np.asarray(mass_matrix, dtype=np.float64))
    n = m_inv.shape[0]
    system = np.block([[np.zeros((n, n)), np.eye(n)],
                       [-m_inv @ np.diag(p), -m_inv @ np.diag(d)]])
    poles = np.linalg.eigvals(system)
    size = np.abs(poles)
    ratios = np.where(size > 0.0, -poles.real / np.where(size > 0.0, size, 1.0), 1.0)
    return float(np.min(ratios))


def sample_poses(model, start: ArrayLike, count: int = DEFAULT_POSES,
                 seed: int = 0) -> FloatArray:
    """
    Return ``start`` and ``count`` poses drawn uniformly within the joint limits, (count+1, n).

    Joints without limits are drawn in [-pi, pi] (or [-1, 1] m for a prismatic one has
    limits in any URDF that ros2_control loads).
    """
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -math.pi)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, math.pi)
    drawn = rng.uniform(lower, upper, size=(count, model.dof))
    return np.vstack([np.asarray(start, dtype=np.float64)[None, :], drawn])


def design_joint_gains(model, update_rate: float, *, start: ArrayLike | None = None,
                       delay_budget: float = DEFAULT_DELAY_BUDGET,
                       floor_error: float = DEFAULT_FLOOR_ERROR,
                       poses: ArrayLike | None = None) -> JointGains:
    """
    Return PD gains stable up to a delay budget over the joint range (module docstring).

    :param model: The :class:`~manip_dynamics.RobotModel` (rotor inertia counts).
    :param update_rate: The real-time loop's rate [Hz], > 0.
    :param start: A pose always among the poses (the start pose), shape (n,); default
        zeros clipped to the limits.
    :param delay_budget: Age of the measurement the gains must tolerate [s]; the budget in
        cycles is ``max(1, ceil(delay_budget x update_rate))``.
    :param floor_error: The stiffness floor: ``p_i >= effort_limit_i / floor_error``
        [rad or m], capped at :data:`FLOOR_CAP` x ``m_i w^2``; 0 = no floor.
    :param poses: The poses to design over, shape (K, n); default :func:`sample_poses`.
    :return: The gains and their margins (:class:`JointGains`).
    :raises ValueError: A bad rate, budget or pose, or a budget no gains hold.
    """
    if not (math.isfinite(update_rate) and update_rate > 0.0):
        raise ValueError('update_rate must be > 0 Hz, got %r' % (update_rate,))
    if not (math.isfinite(delay_budget) and delay_budget >= 0.0):
        raise ValueError('delay_budget must be >= 0 s, got %r' % (delay_budget,))
    if not (math.isfinite(floor_error) and floor_error >= 0.0):
        raise ValueError('floor_error must be >= 0, got %r' % (floor_error,))
    cycles = max(1, int(math.ceil(delay_budget * update_rate - 1e-9)))
    if poses is None:
        if start is None:
            start = np.clip(np.zeros(model.dof), model.position_lower, model.position_upper)
        poses = sample_poses(model, start)
    poses = np.atleast_2d(np.asarray(poses, dtype=np.float64))
    if poses.shape[1] != model.dof or not np.all(np.isfinite(poses)):
        raise ValueError('poses must be finite, shape (K, %d), got %s' % (model.dof,
                                                                          poses.shape))
    masses = [model.mass_matrix(q, include_armature=True) for q in poses]
    inertia = 1.0 / np.max([np.diag(np.linalg.inv(m)) for m in masses], axis=0)
    effort = np.asarray(model.effort_limits, dtype=np.float64)
    floor = np.where(np.isfinite(effort) & (effort > 0.0) & (floor_error > 0.0),
                     effort / max(floor_error, 1e-300), 0.0)

    def gains(w: float, zeta: float) -> tuple[FloatArray, FloatArray]:
        base = inertia * w * w
        p = np.minimum(np.maximum(base, floor), FLOOR_CAP * base)
        return p, 2.0 * zeta * np.sqrt(p * inertia)

    def worst(w: float, zeta: float, delay: int) -> float:
        p, d = gains(w, zeta)
        return max(spectral_radius(m, p, d, update_rate, delay) for m in masses)

    zeta = 1.0
    design = DELAY_MARGIN * cycles
    if worst(0.1, zeta, design) >= 1.0:
        raise ValueError('no gains are stable with a delay of %d cycles at %g Hz: lower the '
                         'delay budget' % (design, update_rate))
    low, high = 0.1, math.pi * update_rate   # the sampling's own limit
    while high / low > 1.02:
        middle = math.sqrt(low * high)
        if worst(middle, zeta, design) < 1.0:
            low = middle
        else:
            high = middle
    w = low
    p, d = gains(w, zeta)
    ratio = min(damping_ratio(m, p, d) for m in masses)
    stable, unstable = design, 2 * design + 1   # the margin: bisection on the delay
    if worst(w, zeta, unstable - 1) < 1.0:
        stable = unstable - 1
    while unstable - stable > 1:
        middle = (stable + unstable) // 2
        if worst(w, zeta, middle) < 1.0:
            stable = middle
        else:
            unstable = middle
    return JointGains(p=p, d=d, bandwidth=w, zeta=zeta, delay_cycles=cycles,
                      update_rate=float(update_rate),
                      spectral_radius=worst(w, zeta, cycles), damping_ratio=ratio,
                      delay_margin_cycles=stable)
