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
The generalised-momentum observer of external joint torques (De Luca and Mattone 2003).

Continuous form (Haddadin, De Luca and Albu-Schaeffer 2017, "Robot collisions: a survey on
detection, isolation, and identification", IEEE T-RO 33(6), sec. IV-B).  With the
generalised momentum ``p = M(q) qd`` and the equations of motion

    M qdd + C qd + g + F(qd) = tau + tau_ext,

the identity ``dM/dt = C + C^T`` (C from the Christoffel symbols) gives

    dp/dt = tau + tau_ext + C(q, qd)^T qd - g(q) - F(qd).

The residual

    r(t) = K (p(t) - p(0) - integral_0^t (tau + C^T qd - g - F + r) ds),   K = diag(k_i) > 0,

then obeys ``dr/dt = K (tau_ext - r)``: each component is a first-order low-pass of the
external torque with time constant ``1 / k_i`` [s], and needs neither qdd nor M^-1.

Discrete form used here (backward Euler, unconditionally stable for any ``k_i dt``), for
samples ``(t_k, q_k, qd_k, tau_k)`` with ``dt_k = t_k - t_{k-1}``::

    p_k    = M(q_k) qd_k
    beta_k = tau_k + C(q_k, qd_k)^T qd_k - g(q_k) - F(qd_k)
    r_k    = (I + dt_k K)^-1 K (p_k - p_0 - z_{k-1} - dt_k beta_k)
    z_k    = z_{k-1} + dt_k (beta_k + r_k),        z_0 = 0,  r_0 = 0

so that ``r_k = K (p_k - p_0 - z_k)`` holds exactly at every sample.  A constant
``tau_ext`` gives ``r_k = tau_ext (1 - prod_j (1 + k dt_j)^-1)``, which tends to
``tau_ext (1 - exp(-k t))`` as dt -> 0.  ``tau_k`` is the torque the joints applied over
``(t_{k-1}, t_k]`` (a zero-order hold ending at the sample, as the simulator reports it)
and friction is taken at the end of the interval, like the simulator's implicit friction.

A stalled sample chain.  Behind a controller_manager whose update loop stalled, the samples
after the gap carry states older than their stamps until the hardware interface has caught
up (measured behind TopicBasedSystem: 63 ms behind after a 65 ms stall, caught up 22 ms
later), so ``dt_k`` is not the time the state took to change and ``dt_k beta_k`` is charged
to the wrong interval: K times that error shows as an external torque (false contacts at
1.0 to 1.9 of a 1.5 N m threshold on a moving arm).  After a gap longer than ``stall_gap``
(and not longer than ``max_step``, which restarts) the observer *coasts* for half as long
(more than twice the catch-up measured):
at each sample it re-anchors ``p_0 = p_k`` and ``z_k = -r / K`` so that ``r_k`` keeps the
value it had before the gap, and no external torque is estimated from those samples.  A
contact flagged before the gap stays flagged; one that begins during the coast is seen when
it ends, with the same first-order rise as from a restart.  A gap that messages lost on the
way explain (``lost``: counted from the publisher's sequence numbers, e.g. a reader that fell
behind and dropped the oldest) is no stall: those states were published on time, and the
observer coasts only when the part of the gap they do not explain, ``dt - lost * spacing``
(``spacing``: a running mean of the stream's gap-free spacing), is over ``stall_gap``.
Otherwise a reader that keeps falling behind coasts through a whole contact (by hand behind
controller_manager 4.46: a 0.3 s push missed while coasting).

Dry friction that sticks (``stiction``).  The model's Coulomb term ``f_c tanh(qd / v_s)`` is
zero at rest, but a physical joint's dry friction, like MuJoCo's ``frictionloss``, holds any
torque up to ``f_c`` there (Craig sec. 6.11: Coulomb friction at zero velocity is "any value
up to the breakaway force").  Before a planned move breaks away, that held torque (up to the
whole ``f_c``) showed in r as an external torque: on a UR5 in MuJoCo with 3 N m of dry
friction, 19 of 20 undisturbed moves raised a false contact 40 to 250 ms in.  With
``stiction``, at a joint slower than ``rest_speed`` the friction is not the model's value but
whatever value within ``b qd +- f_c`` brings ``r_i`` closest to zero::

    F_i = clip(F_model,i - r_i / g_i, b_i qd_i - f_c,i, b_i qd_i + f_c,i),
    g_i = k_i dt / (1 + k_i dt)      (dr_i / dF_i in the update above)

and ``beta`` and ``z`` use that value, so ``r_k = K (p_k - p_0 - z_k)`` still holds.  The
price: an external torque on a joint at rest shows reduced by up to that joint's ``f_c`` (as
it must: such a torque is what the friction could be holding), 2 ``f_c`` against a friction
that was already holding the other way.  Off by default: the suite's simulator has no
stiction (docs/THEORY.md), and there the same term would bias r.

M, C and g are the model's (:meth:`RobotModel.mass_matrix`, :meth:`coriolis_matrix`,
:meth:`gravity_torques`), payloads included; F is :meth:`RobotModel.friction_torques`
when ``include_friction``.  Whatever the model gets wrong (mass, friction, a torque sensor's
offset) shows up in r as if it were an external torque: see docs/CONTACT_DETECTION.md.
"""

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.errors import InputError
from manip_dynamics.small_arrays import all_finite

FloatArray = NDArray[np.float64]

#: Default largest time between two samples [s]: a longer gap restarts the observer.
DEFAULT_MAX_STEP = 0.1
#: Default gap [s] after which the observer coasts (module docstring): 10 update periods
#: at 500 Hz; a loaded machine's controller_manager stalled 40 to 98 ms.
DEFAULT_STALL_GAP = 0.02
#: Weight of a new gap-free spacing in the running mean that says how long a lost sample
#: stood for (``update``'s ``lost``): about the last 20 samples.
SPACING_WEIGHT = 0.05
#: Default speed [rad/s or m/s] under which a joint counts as at rest, where dry friction
#: holds an unknown torque up to its Coulomb level: the observer's ``rest_speed`` (with
#: ``stiction``) and ``manip-dynamics identify fit --min-speed`` (the rows it leaves out).
#: Twice the model's default width of the smooth Coulomb sign (0.01 rad/s), where that sign
#: has reached 96 %.
REST_SPEED = 0.02


def observer_gains(gains: ArrayLike | float, n: int) -> FloatArray:
    """
    Return per-joint observer gains, checked.

    :param gains: One gain for every joint or one per joint [1/s], > 0 and finite.
    :param n: Number of joints.
    :return: Shape (n,).
    :raises InputError: Wrong length, non-positive or non-finite gain.
    """
    try:
        k = np.array(gains, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError('observer gains must be numbers, got %r' % (gains,)) from None
    if k.size == 1:
        k = np.full(n, k[0])
    if k.shape != (n,):
        raise InputError('observer gains must be one value or %d values, got %d'
                         % (n, k.size))
    if not np.all(np.isfinite(k)) or np.any(k <= 0.0):
        raise InputError('observer gains must be finite and > 0 [1/s], got %s' % k.tolist())
    return k


class MomentumObserver:
    """
    Estimate external joint torques from joint states and applied torques (module docstring).

    Feed samples in time order with :meth:`update`; the first sample (and the first after
    :meth:`reset` or after a gap longer than ``max_step``) only sets ``p(0)`` and gives
    r = 0.  A rejected sample (InputError) leaves the observer as it was.  Not
    thread-safe: one observer per stream of samples.

    Example::

        obs = MomentumObserver(model, gains=50.0)
        for t, q, qd, tau in samples:
            r = obs.update(t, q, qd, tau)     # [N m], model order
    """

    def __init__(self, model, gains: ArrayLike | float, *, include_friction: bool = True,
                 include_armature: bool = True, max_step: float = DEFAULT_MAX_STEP,
                 stall_gap: float = DEFAULT_STALL_GAP, stiction: bool = False,
                 rest_speed: float = REST_SPEED) -> None:
        """
        Set up an observer; it starts at the first :meth:`update`.

        :param model: The :class:`~manip_dynamics.RobotModel` (its current payloads and
            friction are read at every update).
        :param gains: K, one value or one per joint [1/s]; the residual's time constant is
            ``1 / k`` [s].
        :param include_friction: Subtract the model's viscous + Coulomb friction F(qd).
        :param include_armature: Add the model's rotor inertias (zero unless set) to M;
            default True, as the simulator and the controllers do (without them a moving
            arm's -I_a qdd shows as an external torque).
        :param max_step: Largest sample spacing [s]; a longer gap restarts the observer.
        :param stall_gap: A sample spacing longer than this [s] (up to ``max_step``) makes
            the observer coast for half as long (module docstring); ``inf`` never.
        :param stiction: At a joint slower than ``rest_speed``, take the friction as any value
            up to its Coulomb level that explains the residual (module docstring); needs
            ``include_friction``.
        :param rest_speed: [rad/s or m/s], >= 0.
        :raises InputError: Bad gains, max_step, stall_gap or rest_speed; ``stiction``
            without ``include_friction``.
        """
        self._model = model
        self._n = model.dof
        self._k = observer_gains(gains, self._n)
        self._include_friction = bool(include_friction)
        self._include_armature = bool(include_armature)
        if not (isinstance(max_step, (int, float)) and math.isfinite(max_step)
                and max_step > 0.0):
            raise InputError('max_step must be finite and > 0 [s], got %r' % (max_step,))
        self._max_step = float(max_step)
        if not (isinstance(stall_gap, (int, float)) and stall_gap > 0.0):
            raise InputError('stall_gap must be > 0 [s] (inf: never coast), got %r'
                             % (stall_gap,))
        self._stall_gap = float(stall_gap)
        if not (isinstance(rest_speed, (int, float)) and math.isfinite(rest_speed)
                and rest_speed >= 0.0):
            raise InputError('rest_speed must be finite and >= 0 [rad/s], got %r'
                             % (rest_speed,))
        if stiction and not include_friction:
            raise InputError('stiction needs include_friction (the friction at rest is a '
                             'part of the friction the observer subtracts)')
        self._stiction = bool(stiction)
        self._rest_speed = float(rest_speed)
        self._spacing: float | None = None   # the stream's gap-free spacing [s], running mean
        self._coast_until = -math.inf
        self._coasting = False
        self._t: float | None = None
        self._p0 = np.zeros(self._n)
        self._z = np.zeros(self._n)
        self._r = np.zeros(self._n)
        self._restarted = False

    @property
    def gains(self) -> FloatArray:
        """Return K [1/s], shape (n,)."""
        return self._k.copy()

    @property
    def residual(self) -> FloatArray:
        """Return the last residual r [N m or N], shape (n,), model order."""
        return self._r.copy()

    @property
    def time(self) -> float | None:
        """Return the time of the last accepted sample [s], None before the first."""
        return self._t

    @property
    def restarted(self) -> bool:
        """Return whether the last :meth:`update` (re)started the observer (r = 0)."""
        return self._restarted

    @property
    def coasting(self) -> bool:
        """Return whether the last :meth:`update` coasted after a stall (r held)."""
        return self._coasting

    def reset(self) -> None:
        """Forget the history: the next sample starts the observer again (e.g. new payload)."""
        self._t = None
        self._coast_until = -math.inf
        self._coasting = False
        self._r[:] = 0.0
        self._z[:] = 0.0

    def _vector(self, value: ArrayLike, what: str) -> FloatArray:
        if (type(value) is np.ndarray and value.dtype == np.float64
                and value.shape == (self._n,) and all_finite(value)):
            return value  # already checked (the fast path of a node's 1 kHz loop)
        return self._model.to_model_order((), value, what=what)

    def momentum(self, q: ArrayLike, qd: ArrayLike) -> FloatArray:
        """
        Return the generalised momentum ``p = M(q) qd``.

        :param q: Joint positions, shape (n,).
        :param qd: Joint velocities, shape (n,).
        :return: p [kg m^2/s or kg m/s], shape (n,).
        """
        mass = self._model.mass_matrix(q, include_armature=self._include_armature)
        with np.errstate(over='ignore', invalid='ignore'):  # an overflow is checked after
            return mass @ qd

    def beta(self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike) -> FloatArray:
        """
        Return ``tau + C(q, qd)^T qd - g(q) - F(qd)``: dp/dt without the external torque.

        :param q: Joint positions, shape (n,).
        :param qd: Joint velocities, shape (n,).
        :param tau: Applied joint torques [N m or N], shape (n,).
        :return: Shape (n,).
        """
        return self._beta(q, qd, tau)[0]

    def _beta(self, q: ArrayLike, qd: ArrayLike,
              tau: ArrayLike) -> tuple[FloatArray, FloatArray | None]:
        """Return :meth:`beta` and the friction F(qd) it took off (None without friction)."""
        model = self._model
        out = tau + model.coriolis_matrix(q, qd).T @ qd - model.gravity_torques(q)
        if not self._include_friction:
            return out, None
        friction = model.friction_torques(qd)
        return out - friction, friction

    def update(self, t: float, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
               lost: int = 0) -> FloatArray:
        """
        Take one sample and return the residual r ~ tau_ext (see the module docstring).

        :param t: Sample time [s], increasing from sample to sample.
        :param q: Joint positions [rad or m], shape (n,), model order.
        :param qd: Joint velocities [rad/s or m/s], shape (n,).
        :param tau: Torques the joints applied over the interval ending at ``t`` [N m or
            N], shape (n,).
        :param lost: Samples published since the previous one and never received (>= 0;
            from sequence numbers): a gap they explain is not a stall (module docstring).
        :return: r [N m or N], shape (n,), model order (a copy).
        :raises InputError: NaN/inf or wrong shape, ``t`` not after the previous sample, or
            a momentum that overflows: the observer is then unchanged; a residual that
            overflows: the observer restarts at the next sample.
        """
        try:
            t = float(t)
        except (TypeError, ValueError):
            raise InputError('sample time must be a number, got %r' % (t,)) from None
        if not math.isfinite(t):
            raise InputError('sample time is %r' % t)
        q = self._vector(q, 'positions')
        qd = self._vector(qd, 'velocities')
        tau = self._vector(tau, 'efforts')
        if self._t is not None and t <= self._t:
            raise InputError('sample time %.9f s is not after the previous sample (%.9f s)'
                             % (t, self._t))
        p = self.momentum(q, qd)
        if not all_finite(p):
            raise InputError('the momentum M(q) qd is not finite (floating-point overflow): '
                             'velocity of joint %r is %r, too large for the dynamics' % (
                                 self._model.joint_names[int(np.argmax(np.abs(qd)))],
                                 float(np.max(np.abs(qd)))))
        if self._t is None or t - self._t > self._max_step:
            self._p0 = p
            self._z[:] = 0.0
            self._r[:] = 0.0
            self._t = t
            self._restarted = True
            self._coasting = False
            self._coast_until = -math.inf
            return self._r.copy()
        self._restarted = False
        dt = t - self._t
        lost = max(int(lost), 0)
        unexplained = dt - lost * self._spacing if self._spacing is not None else dt
        if unexplained > self._stall_gap:
            self._coast_until = t + 0.5 * dt
        elif lost == 0:
            self._spacing = dt if self._spacing is None else self._spacing + SPACING_WEIGHT * (
                dt - self._spacing)
        self._coasting = t <= self._coast_until
        if self._coasting:
            # re-anchor the balance here: r_k = K (p_k - p_0 - z_k) keeps its value
            self._p0 = p
            self._z = -self._r / self._k
            self._t = t
            return self._r.copy()
        beta, friction = self._beta(q, qd, tau)
        k = self._k
        with np.errstate(over='ignore', invalid='ignore'):  # checked on the next line
            r = k * (p - self._p0 - self._z - dt * beta) / (1.0 + dt * k)
            if self._stiction:
                r, beta = self._held_by_friction(qd, dt, r, beta, friction)
        if not (all_finite(r) and all_finite(beta)):
            # an overflow in the sums: the history is lost, start again at the next sample
            self.reset()
            raise InputError('the residual is not finite (floating-point overflow) at t = '
                             '%.9f s: the observer restarts at the next sample' % t)
        self._z += dt * (beta + r)
        self._r = r
        self._t = t
        return r.copy()

    def _held_by_friction(self, qd: FloatArray, dt: float, r: FloatArray, beta: FloatArray,
                          smooth: FloatArray) -> tuple[FloatArray, FloatArray]:
        """
        Return ``(r, beta)`` with each joint at rest's friction set to explain r (stiction).

        See the module docstring: ``F_i = clip(F_model,i - r_i / g_i, b qd -+ f_c)``;
        ``smooth`` is F_model(qd), the friction ``beta`` took off.
        """
        rest = np.abs(qd) < self._rest_speed
        model = self._model
        coulomb = model.coulomb_friction
        rest &= coulomb > 0.0
        if not rest.any():
            return r, beta
        gain = self._k * dt / (1.0 + self._k * dt)
        viscous = model.damping * qd
        held = np.clip(smooth - r / gain, viscous - coulomb, viscous + coulomb)
        change = np.where(rest, held - smooth, 0.0)
        return r + gain * change, beta - change
