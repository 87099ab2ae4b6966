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
Joint position limits in simulation: a stiff one-sided spring-damper or a hard stop.

Only joints with finite URDF limits are affected (continuous joints never are).

``'spring'``: beyond a limit the joint feels a penalty torque (a contact model, not part of
the rigid-body dynamics of Craig ch. 6)::

    upper limit, d = q - upper > 0:  tau_lim = min(0, -k d - c qd)
    lower limit, d = lower - q > 0:  tau_lim = max(0,  k d - c qd)

The ``min``/``max`` keep the contact one-sided: it pushes the joint back but never pulls it
into the stop (no sticking while leaving).  Default gains make the contact a critically
damped oscillator of natural period ``T_c`` on the joint's effective inertia::

    m_eff = 1 / (M(q)^-1)_ii      (the inertia joint i feels with the other joints free;
                                   <= M_ii)
    omega = 2 pi / T_c,  T_c = CONTACT_PERIOD = 5 ms  (capped at RK4_OMEGA_DT / dt for rk4)
    k = m_eff omega^2  [N m/rad],   c = 2 m_eff omega  [N m s/rad]  (damping ratio 1)

``m_eff`` is evaluated at the current state, so the contact keeps its period on light wrist
joints and heavy shoulder joints alike.  A penetration under a steady load ``tau`` is
``tau / k``, e.g. 87 N m on a 1 kg m^2 joint gives 1.4 mrad.

``'hard'``: after every fixed step, ``q`` is clamped to the limit and the velocity
component that points out of the range is set to zero (a perfectly inelastic stop).
``'none'``: limits are ignored.
"""

import math

from numba import njit
import numpy as np

from manip_dynamics.algorithms._jit import INNER
from manip_dynamics.algorithms.forward_dynamics import cholesky_solve
from manip_dynamics.errors import InputError

LIMIT_MODES = ('spring', 'hard', 'none')
#: Natural period of the default limit contact [s].
CONTACT_PERIOD = 0.005
#: Largest ``omega dt`` of the default contact for the explicit RK4 integrator.  RK4 is
#: stable on the negative real axis down to ``lambda dt = -2.78``; the critically damped
#: contact has a double eigenvalue ``-omega``, so ``omega dt <= 2`` keeps a margin.
RK4_OMEGA_DT = 2.0

MODE_CODES = {'none': 0, 'spring': 1, 'hard': 2}
_JIT = {'cache': True, 'nogil': True, **INNER}  # called by the integrators only


def contact_omega(integrator: str, dt: float) -> float:
    """
    Return the natural angular frequency of the default limit contact [rad/s].

    ``2 pi / CONTACT_PERIOD``, capped at ``RK4_OMEGA_DT / dt`` for the explicit 'rk4'
    integrator; 'semi_implicit_euler' treats the contact linearly implicitly and
    'adaptive' chooses its own steps, so neither needs a cap.

    :param integrator: Integrator name.
    :param dt: Fixed step [s].
    :return: omega [rad/s].
    """
    omega = 2.0 * math.pi / CONTACT_PERIOD
    if integrator == 'rk4':
        omega = min(omega, RK4_OMEGA_DT / dt)
    return omega


@njit(**_JIT)
def limit_torques(lower, upper, k_user, c_user, omega, q, qd, M, scratch, tau_lim,  # noqa: N803
                  stiff, damp):
    """
    Spring-damper limit torques of one state; see the module docstring.

    :param lower: Lower limits (n,), -inf when none; ``upper`` likewise.
    :param k_user: Stiffness per joint (n,) [N m/rad], NaN = default from ``omega``.
    :param c_user: Damping per joint (n,) [N m s/rad], NaN = critical for the stiffness.
    :param omega: Natural angular frequency of the default contact [rad/s].
    :param q: Joint positions (n,); ``qd`` velocities (n,).
    :param M: Mass matrix at ``q`` (n, n), read only.
    :param scratch: (n + 1, n) work array.
    :param tau_lim: Output (n,) limit torques.
    :param stiff: Output (n,) active stiffness (-d tau_lim / d q), 0 when not in contact.
    :param damp: Output (n,) active damping (-d tau_lim / d qd), 0 when not in contact.
    :return: False when M is not positive definite.
    """
    n = q.shape[0]
    for i in range(n):
        tau_lim[i] = 0.0
        stiff[i] = 0.0
        damp[i] = 0.0
        if q[i] > upper[i]:
            pen = q[i] - upper[i]
            sgn = -1.0
        elif q[i] < lower[i]:
            pen = lower[i] - q[i]
            sgn = 1.0
        else:
            continue
        k = k_user[i]
        c = c_user[i]
        if math.isnan(k) or math.isnan(c):
            # effective inertia 1 / (M^-1)_ii: solve M x = e_i on a copy
            A = scratch[:n]
            b = scratch[n]
            for r in range(n):
                for s in range(n):
                    A[r, s] = M[r, s]
                b[r] = 0.0
            b[i] = 1.0
            if not cholesky_solve(A, b):
                return False
            m_eff = 1.0 / b[i]
            if math.isnan(k):
                k = m_eff * omega * omega
            if math.isnan(c):
                c = 2.0 * math.sqrt(k * m_eff)
        force = sgn * k * pen - c * qd[i]
        if force * sgn > 0.0:
            tau_lim[i] = force
            stiff[i] = k
            damp[i] = c
    return True


@njit(**_JIT)
def hard_stop(lower, upper, q, qd):
    """Clamp ``q`` into its limits and zero the outward velocity (inelastic stop), in place."""
    for i in range(q.shape[0]):
        if q[i] > upper[i]:
            q[i] = upper[i]
            if qd[i] > 0.0:
                qd[i] = 0.0
        elif q[i] < lower[i]:
            q[i] = lower[i]
            if qd[i] < 0.0:
                qd[i] = 0.0


def limit_gains(values: object, n: int, what: str) -> np.ndarray:
    """
    Return user limit gains as an (n,) array; None gives NaN (= use the default).

    :param values: None, a scalar or n values, each >= 0 (NaN entries keep the default).
    :param n: Number of joints.
    :param what: Argument name for error messages.
    :return: Shape (n,) float array.
    :raises InputError: Wrong length, negative or infinite value.
    """
    if values is None:
        return np.full(n, np.nan)
    try:
        arr = np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError('%s must be a number or %d numbers, got %r' % (what, n, values)
                         ) from None
    if arr.size == 1:
        arr = np.full(n, arr[0])
    if arr.shape != (n,):
        raise InputError('%s must be a number or %d numbers, got %d' % (what, n, arr.size))
    if np.any(np.isinf(arr)) or np.any(arr < 0.0):
        raise InputError('%s must be finite and >= 0, got %s' % (what, arr))
    return arr
