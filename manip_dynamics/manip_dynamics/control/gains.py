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
arm: linearized about a pose with the feed-forward cancelling the velocity terms and the
gravity torques of the desired pose, the error obeys ``M(q) e'' = -(P + K) e - D e'``
(Craig eq. 6.59 with sec. 10.6's partitioned law, ``M`` with the rotor inertia), where
``K = dG/dq`` is the gravity stiffness: the gravity torques' change with the pose (the
Hessian of the potential energy, symmetric), which the feed-forward of the desired pose
leaves to the loop. Where ``K`` has a negative direction (a joint that gravity pulls further
away, as cobot7's joint 3 at its ready pose, -16 N m/rad) the stiffness ``P`` must outweigh
it, or the arm drifts away from a held pose however good the feed-forward. The loop runs at
``update_rate`` with a zero-order hold, and its measurement is ``delay`` update cycles old
(topic hops between the hardware and controller_manager, a non-real-time machine's jitter).
Per period ``T``, with ``[A, B]`` the zero-order-hold discretization of
``x' = [[0, I], [-M^-1 K, 0]] x + [[0], [M^-1]] u`` (for ``K = 0``: ``A = [[I, T I], [0,
I]]``, ``B = [[T^2/2 M^-1], [T M^-1]]``):

    x_{k+1} = A x_k + B u_k,   u_k = -[P, D] x_{k-delay}

and the loop is stable when the spectral radius of that delayed system is below 1
(:func:`spectral_radius`).

:func:`design_joint_gains` chooses ``p_i = m_i w^2`` and ``d_i = 2 zeta sqrt(p_i m_i)``
per joint, ``m_i = 1 / max_poses (M^-1)_ii`` (the smallest inertia joint i moves with the
others free, over poses across the joint range, not one pose), with a stiffness floor for
light joints (full effort at ``floor_error``, but at most :data:`FLOOR_CAP` x ``m_i w^2``)
``zeta = 1`` (critically damped at the lightest pose), and the bandwidth ``w`` the largest
whose worst spectral radius over those poses stays below 1 at :data:`DELAY_MARGIN` times
the delay budget: the gains tolerate twice the delay they are designed for. Constant joint
gains on an arm whose inertia varies over its range are underdamped at the heavy poses
(more damping costs bandwidth under delay): :attr:`JointGains.damping_ratio` says how much.

Gravity: each joint's stiffness is first raised to :data:`GRAVITY_MARGIN` times the largest
pull of gravity along it over the poses (``p_i >= GRAVITY_MARGIN x max_poses(-K_ii)``), and
the bandwidth searched on the loop with ``K``. Where no bandwidth is then stable at the
design delay (a light joint that gravity pulls hard needs more bandwidth than the delay
allows), the gains are designed as without gravity (``K = 0``, no gravity floor) and
:attr:`JointGains.hold_stiffness`, the least eigenvalue of ``P + K`` over the poses, says
what is left: negative means a pose the gains cannot hold still with the feed-forward of
the desired pose alone. Measured behind the real controller_manager (docs/ROS2_CONTROL.md):
cobot7's joint 3 drifted away from its ready pose under the gravity-free 2-cycle design at
250 Hz (``P + K`` has an eigenvalue of -8.3 N m/rad there); with a 2-cycle budget the
gravity floor fits cobot7 from 500 Hz on, and gripper_arm at no rate tried.
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
#: The gravity floor's factor: each joint at least this many times the largest pull of
#: gravity along it over the poses (``-K_ii``; module docstring).
GRAVITY_MARGIN = 2.0
#: Step of the central differences of the gravity torques [rad or m].
STIFFNESS_STEP = 1e-6


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
    #: The least eigenvalue of ``P + K`` over the poses [N m/rad]: negative where gravity
    #: pulls a held pose away faster than the stiffness pulls it back (module docstring);
    #: the design does not raise the gains for it (see there).
    hold_stiffness: float


def gravity_stiffness(model, q: ArrayLike) -> FloatArray:
    """
    Return ``K = dG/dq`` at pose ``q`` [N m/rad or N/m], shape (n, n), symmetric.

    Central differences of the model's gravity torques (Craig eq. 6.59's ``G``, the torque
    holding the arm still) with step :data:`STIFFNESS_STEP`; the mean of ``K`` and its
    transpose (the Hessian of the potential energy is symmetric; the mean removes the
    differences' round-off).
    """
    q = np.asarray(q, dtype=np.float64)
    n = q.shape[0]
    steps = STIFFNESS_STEP * np.eye(n)
    # one batch: row j is the pose moved along joint j, up then down
    g = model.gravity_torques(np.vstack([q + steps, q - steps]))
    k = ((g[:n] - g[n:]) / (2.0 * STIFFNESS_STEP)).T
    return 0.5 * (k + k.T)


def _plant(mass_matrix: ArrayLike, stiffness: ArrayLike | None,
           update_rate: float) -> tuple[FloatArray, FloatArray, int]:
    """Return the zero-order-hold ``A`` (2n, 2n), ``B`` (2n, n) and n (module docstring)."""
    m_inv = np.linalg.inv(np.asarray(mass_matrix, dtype=np.float64))
    n = m_inv.shape[0]
    period = 1.0 / float(update_rate)
    eye = np.eye(n)
    if stiffness is None or not np.any(stiffness):
        a = np.block([[eye, period * eye], [np.zeros((n, n)), eye]])
        b = np.vstack([0.5 * period * period * m_inv, period * m_inv])
        return a, b, n
    from scipy.linalg import expm
    # [[A_c, B_c], [0, 0]] exponentiated over one period: [[A, B], [0, I]]
    block = np.zeros((3 * n, 3 * n))
    block[:n, n:2 * n] = eye
    block[n:2 * n, :n] = -m_inv @ np.asarray(stiffness, dtype=np.float64)
    block[n:2 * n, 2 * n:] = m_inv
    step = expm(block * period)
    return step[:2 * n, :2 * n], step[:2 * n, 2 * n:], n


def spectral_radius(mass_matrix: ArrayLike, p: ArrayLike, d: ArrayLike, update_rate: float,
                    delay_cycles: int, stiffness: ArrayLike | None = None) -> float:
    """
    Return the spectral radius of the sampled PD loop about one pose (module docstring).

    :param mass_matrix: ``M(q)`` with rotor inertia [kg m^2 or kg], shape (n, n).
    :param p: Stiffness per joint [N m/rad or N/m], shape (n,).
    :param d: Damping per joint [N m s/rad or N s/m], shape (n,).
    :param update_rate: Loop rate [Hz], > 0.
    :param delay_cycles: Age of the measurement [update cycles], >= 0.
    :param stiffness: The gravity stiffness ``K`` at the pose (:func:`gravity_stiffness`),
        shape (n, n); None = 0 (no gravity, or a gravity-free axis).
    :return: The largest eigenvalue magnitude of the closed loop (< 1: stable).
    """
    a, b, n = _plant(mass_matrix, stiffness, update_rate)
    eye = np.eye(n)
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


def damping_ratio(mass_matrix: ArrayLike, p: ArrayLike, d: ArrayLike,
                  stiffness: ArrayLike | None = None) -> float:
    """
    Return the least damping ratio of the continuous loop ``M e'' = -(P + K) e - D e'``.

    The modes of the coupled arm: eigenvalues ``s`` of ``[[0, I], [-M^-1 (P + K), -M^-1
    D]]``, each with ratio ``-Re(s) / |s|`` (1 for a real pole; negative: unstable).
    ``stiffness``: ``K`` (:func:`gravity_stiffness`), None = 0.
    """
    m_inv = np.linalg.inv(np.asarray(mass_matrix, dtype=np.float64))
    n = m_inv.shape[0]
    spring = np.diag(p) + (0.0 if stiffness is None else np.asarray(stiffness))
    system = np.block([[np.zeros((n, n)), np.eye(n)],
                       [-m_inv @ spring, -m_inv @ np.diag(d)]])
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
    stiffnesses = [gravity_stiffness(model, q) for q in poses]
    inertia = 1.0 / np.max([np.diag(np.linalg.inv(m)) for m in masses], axis=0)
    effort = np.asarray(model.effort_limits, dtype=np.float64)
    floor = np.where(np.isfinite(effort) & (effort > 0.0) & (floor_error > 0.0),
                     effort / max(floor_error, 1e-300), 0.0)
    # the gravity floor (module docstring); where it leaves no stable gains, none
    lift = GRAVITY_MARGIN * np.maximum(np.max([-np.diag(k) for k in stiffnesses], axis=0), 0.0)
    zeta = 1.0
    design = DELAY_MARGIN * cycles

    def gains(w: float, floor_of_gravity: FloatArray) -> tuple[FloatArray, FloatArray]:
        base = inertia * w * w
        p = np.maximum(np.minimum(np.maximum(base, floor), FLOOR_CAP * base), floor_of_gravity)
        return p, 2.0 * zeta * np.sqrt(p * inertia)

    def radius(w: float, floor_of_gravity: FloatArray, delay: int) -> float:
        p, d = gains(w, floor_of_gravity)
        gravity = stiffnesses if np.any(floor_of_gravity) else [None] * len(masses)
        return max(spectral_radius(m, p, d, update_rate, delay, k)
                   for m, k in zip(masses, gravity))

    def bandwidth(floor_of_gravity: FloatArray) -> float | None:
        if radius(0.1, floor_of_gravity, design) >= 1.0:
            return None
        low, high = 0.1, math.pi * update_rate   # the sampling's own limit
        while high / low > 1.02:
            middle = math.sqrt(low * high)
            if radius(middle, floor_of_gravity, design) < 1.0:
                low = middle
            else:
                high = middle
        return low

    w = bandwidth(lift) if np.any(lift) else None
    if w is None:   # gravity cannot be outweighed at this budget: the loop without it
        lift = np.zeros_like(lift)
        w = bandwidth(lift)
    if w is None:
        raise ValueError('no gains are stable with a delay of %d cycles at %g Hz: lower the '
                         'delay budget' % (design, update_rate))
    p, d = gains(w, lift)
    ratio = min(damping_ratio(m, p, d, k if np.any(lift) else None)
                for m, k in zip(masses, stiffnesses))
    held = min(float(np.linalg.eigvalsh(np.diag(p) + k)[0]) for k in stiffnesses)
    stable, unstable = design, 2 * design + 1   # the margin: bisection on the delay
    if radius(w, lift, unstable - 1) < 1.0:
        stable = unstable - 1
    while unstable - stable > 1:
        middle = (stable + unstable) // 2
        if radius(w, lift, middle) < 1.0:
            stable = middle
        else:
            unstable = middle
    return JointGains(p=p, d=d, bandwidth=w, zeta=zeta, delay_cycles=cycles,
                      update_rate=float(update_rate),
                      spectral_radius=radius(w, lift, cycles), damping_ratio=ratio,
                      delay_margin_cycles=stable, hold_stiffness=held)


#: Goal tolerance beyond the friction offset [rad or m] (joint_trajectory_controller's
#: ``constraints.<joint>.goal``), and the time a joint takes at its velocity limit to leave
#: its path tolerance (``constraints.<joint>.trajectory``) [s], with that tolerance's bounds.
GOAL_TOLERANCE_FLOOR = 0.01
TRAJECTORY_TOLERANCE_TIME = 0.1
TRAJECTORY_TOLERANCE_RANGE = (0.05, 0.25)
#: ``constraints.goal_time`` [s] and ``stopped_velocity_tolerance`` [rad/s or m/s] written
#: with the gains: within MoveIt's allowance (it cancels an execution running past 1.1 x its
#: duration + 0.5 s) together with the time a goal takes to reach JTC through
#: feedforward_filter, so a late goal fails as GOAL_TOLERANCE_VIOLATED, not as MoveIt's
#: cancel. MoveIt sends no goal_time_tolerance, so this one applies. A goal time
#: of 0.5 s left 0.2 s for a goal of 2 s to reach JTC; by hand with a busy core, goals of the
#: endings campaign reached it more than 0.5 s after they were sent in 3 of 40.
GOAL_TIME = 0.25
STOPPED_VELOCITY_TOLERANCE = 0.05


@dataclass(frozen=True)
class TrajectoryTolerances:
    """joint_trajectory_controller's ``constraints`` for an arm and its gains (model order)."""

    #: Path tolerance per joint while moving [rad or m], shape (n,).
    trajectory: FloatArray
    #: Goal tolerance per joint at the end [rad or m], shape (n,).
    goal: FloatArray
    #: Velocity below which the arm counts as stopped at the goal [rad/s or m/s].
    stopped_velocity: float
    #: Time after the plan's end within which the goal tolerance must be met [s].
    goal_time: float


def trajectory_tolerances(model, p: ArrayLike) -> TrajectoryTolerances:
    """
    Return JTC tolerances that report a plan ending off target, for PD gains ``p``.

    A PD loop without integral action comes to rest short of its goal by up to the Coulomb
    friction over the stiffness, ``f_c / p`` (Craig eq. 6.104's friction against the servo's
    stiffness): the goal tolerance is twice that plus :data:`GOAL_TOLERANCE_FLOOR`, so a plan
    that ends where the gains can bring it succeeds and one that ends farther off fails
    (GOAL_TOLERANCE_VIOLATED). The path tolerance is the way a joint covers in
    :data:`TRAJECTORY_TOLERANCE_TIME` at its velocity limit, within
    :data:`TRAJECTORY_TOLERANCE_RANGE`: the tracking error of a fed-forward plan is orders
    smaller, a collision or a fall exceeds it.

    :param model: The :class:`~manip_dynamics.RobotModel` (its friction and limits).
    :param p: Stiffness per joint [N m/rad or N/m], model order, shape (n,), > 0.
    :return: The :class:`TrajectoryTolerances`.
    :raises ValueError: ``p`` of the wrong shape, not finite or not positive.
    """
    stiffness = np.asarray(p, dtype=np.float64).reshape(-1)
    if stiffness.shape != (model.dof,) or not np.all(np.isfinite(stiffness)) or \
            np.any(stiffness <= 0.0):
        raise ValueError('p must be %d finite stiffnesses > 0, got %s'
                         % (model.dof, np.asarray(p).tolist()))
    coulomb = np.abs(np.asarray(model.coulomb_friction, dtype=np.float64))
    goal = GOAL_TOLERANCE_FLOOR + 2.0 * coulomb / stiffness
    velocity = np.asarray(model.velocity_limits, dtype=np.float64)
    low, high = TRAJECTORY_TOLERANCE_RANGE
    trajectory = np.clip(np.where(np.isfinite(velocity), velocity * TRAJECTORY_TOLERANCE_TIME,
                                  high), low, high)
    return TrajectoryTolerances(trajectory, goal, STOPPED_VELOCITY_TOLERANCE, GOAL_TIME)
