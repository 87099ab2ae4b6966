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
Fixed-step integrators of the joint-space equations of motion (Craig sec. 6.12).

The state ``(q, qd)`` obeys Craig eq. 6.115 with friction ``F`` (Craig sec. 6.11) and the
joint-limit contact torque ``tau_lim`` (:mod:`.joint_limits`)::

    qdd = M(q)^-1 (tau - V(q, qd) - G(q) - F(qd) + tau_lim(q, qd))

``tau`` is held constant over each step (zero-order hold, as a 1 kHz controller applies it).
One call of :func:`advance` runs ``steps`` steps inside one compiled kernel, so the only
Python cost per call is the dispatch.

* ``SEMI_IMPLICIT_EULER``: Craig's Euler scheme (eq. 6.117) with the velocity updated first
  and the new velocity used for the position (symplectic Euler)::

      qd+ = qd + dt qdd(q, qd),   q+ = q + dt qd+

  It conserves a shadow energy: with no friction and no contact the total energy oscillates
  with an amplitude O(dt) but does not drift.  The joint-local stiff terms (the slope ``B``
  of the friction torque, the contact stiffness ``K`` and damping ``D``, all diagonal) are
  taken linearly implicitly, so the steep smooth sign of Coulomb friction and the 5 ms
  limit contact stay stable at dt = 1 ms::

      (M + dt (B + D) + dt^2 K) (qd+ - qd) / dt = tau - V - G - F(qd) + tau_lim - dt K qd

  With ``B = D = K = 0`` this is exactly the symplectic Euler step above.
* ``RK4``: the classical four-stage Runge-Kutta method on ``(q, qd)``, fully explicit;
  fourth order, energy error O(dt^4).  It is stable for eigenvalues with
  ``|lambda| dt < 2.78`` on the real axis, which bounds the friction slope
  ``B / m_eff`` it can take at a given step.
"""

from numba import njit
import numpy as np

from manip_dynamics.algorithms.crba import crba_state
from manip_dynamics.algorithms.forward_dynamics import cholesky_solve
from manip_dynamics.algorithms.kinematics import all_finite, joint_transforms
from manip_dynamics.algorithms.rnea import rnea_state
from manip_dynamics.simulation.joint_limits import hard_stop, limit_torques

SEMI_IMPLICIT_EULER = 0
RK4 = 1
#: Return codes of :func:`advance` and :func:`accelerations`.
OK = 0
NOT_FINITE = 1
NOT_POSITIVE_DEFINITE = 2

_JIT = {'cache': True, 'nogil': True}


@njit(**_JIT)
def workspace(n):
    """Return the scratch arrays of :func:`accelerations` for ``n`` joints."""
    return (np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)),
            np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)), np.empty(n),
            np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, n)), np.zeros(n),
            np.zeros((n, 6)), np.empty((n + 1, n)), np.empty(n), np.empty(n), np.empty(n))


@njit(**_JIT)
def accelerations(tree, inertial, joint, limits, h, q, qd, tau, ws, out):
    """
    Joint accelerations of one state, with friction, limit contact and implicit terms.

    :param tree: ``(parent, kind, axis, R_tree, p_tree)`` of the rigid-body tree.
    :param inertial: ``(mass, com, inertia, armature, base_acc)``; armature (n,) is added
        to M's diagonal (zeros for rigid-body only), base_acc = -gravity (3,).
    :param joint: ``(damping, coulomb, friction_velocity (1,), use_friction (1,))``;
        friction is off when ``use_friction[0] == 0``.
    :param limits: ``(mode (1,), lower, upper, k_user, c_user, omega (1,))``; mode 0 none,
        1 spring (2 hard adds no torque here).
    :param h: Step of the linearly implicit treatment of the diagonal stiff terms [s];
        0 gives the plain explicit accelerations.
    :param q: Joint positions (n,); ``qd`` velocities (n,); ``tau`` applied torques (n,).
    :param ws: Scratch from :func:`workspace`.
    :param out: Accelerations written here (n,).
    :return: OK, NOT_FINITE (a non-finite state) or NOT_POSITIVE_DEFINITE.
    """
    parent, kind, axis, R_tree, p_tree = tree
    mass, com, inertia, armature, base_acc = inertial
    damping, coulomb, fric_eps, use_friction = joint
    mode, lower, upper, k_user, c_user, omega = limits
    R, p, w, wd, vd, f, t, mc, hc, Ioc, M, zero, fext, scratch, tau_lim, stiff, damp = ws
    n = q.shape[0]
    if not (all_finite(q) and all_finite(qd)):
        return NOT_FINITE
    joint_transforms(kind, axis, R_tree, p_tree, q, R, p)
    # V + G: one Newton-Euler pass with qdd = 0 (Craig sec. 6.12)
    rnea_state(parent, kind, axis, mass, com, inertia, base_acc, R, p, qd, zero, fext,
               w, wd, vd, f, t, out)
    for i in range(n):
        out[i] = tau[i] - out[i]
    crba_state(parent, kind, axis, mass, com, inertia, armature, R, p, mc, hc, Ioc, M)
    if use_friction[0] != 0:
        eps = fric_eps[0]
        for i in range(n):
            th = np.tanh(qd[i] / eps)
            out[i] -= damping[i] * qd[i] + coulomb[i] * th
            # slope of the friction torque, taken implicitly
            M[i, i] += h * (damping[i] + coulomb[i] / eps * (1.0 - th * th))
    if mode[0] == 1:
        if not limit_torques(lower, upper, k_user, c_user, omega[0], q, qd, M, scratch,
                             tau_lim, stiff, damp):
            return NOT_POSITIVE_DEFINITE
        for i in range(n):
            if stiff[i] != 0.0 or damp[i] != 0.0:
                out[i] += tau_lim[i] - h * stiff[i] * qd[i]
                M[i, i] += h * damp[i] + h * h * stiff[i]
    if not cholesky_solve(M, out):
        return NOT_POSITIVE_DEFINITE
    if not all_finite(out):
        return NOT_FINITE
    return OK


@njit(**_JIT)
def clamp_effort(tau, effort, clamp, out):
    """Copy ``tau`` into ``out``, clamped to ``+-effort`` when ``clamp``; False on NaN/inf."""
    for i in range(tau.shape[0]):
        v = tau[i]
        if not np.isfinite(v):
            return False
        if clamp:
            if v > effort[i]:
                v = effort[i]
            elif v < -effort[i]:
                v = -effort[i]
        out[i] = v
    return True


@njit(**_JIT)
def advance(tree, inertial, joint, limits, method, dt, steps, q, qd, tau, ws, info):
    """
    Advance ``(q, qd)`` in place by ``steps`` fixed steps of ``dt`` with constant ``tau``.

    :param method: SEMI_IMPLICIT_EULER or RK4.
    :param dt: Step [s].
    :param steps: Number of steps.
    :param q: Joint positions (n,), updated in place; ``qd`` likewise.
    :param tau: Applied torque (n,), held over every step.
    :param ws: Scratch from :func:`workspace`.
    :param info: int64 (1,): the number of steps completed is written to ``info[0]``.
    :return: OK, or the code of the failing :func:`accelerations` call; ``q``, ``qd``
        then hold the state after the last completed step.
    """
    n = q.shape[0]
    hard = limits[0][0] == 2
    lower = limits[1]
    upper = limits[2]
    a1 = np.empty(n)
    info[0] = 0
    if method == SEMI_IMPLICIT_EULER:
        for s in range(steps):
            code = accelerations(tree, inertial, joint, limits, dt, q, qd, tau, ws, a1)
            if code != OK:
                return code
            for i in range(n):
                qd[i] += dt * a1[i]
                q[i] += dt * qd[i]
            if hard:
                hard_stop(lower, upper, q, qd)
            info[0] = s + 1
        return OK
    a2 = np.empty(n)
    a3 = np.empty(n)
    a4 = np.empty(n)
    qs = np.empty(n)
    vs2 = np.empty(n)
    vs3 = np.empty(n)
    vs4 = np.empty(n)
    half = 0.5 * dt
    for s in range(steps):
        code = accelerations(tree, inertial, joint, limits, 0.0, q, qd, tau, ws, a1)
        if code != OK:
            return code
        for i in range(n):
            qs[i] = q[i] + half * qd[i]
            vs2[i] = qd[i] + half * a1[i]
        code = accelerations(tree, inertial, joint, limits, 0.0, qs, vs2, tau, ws, a2)
        if code != OK:
            return code
        for i in range(n):
            qs[i] = q[i] + half * vs2[i]
            vs3[i] = qd[i] + half * a2[i]
        code = accelerations(tree, inertial, joint, limits, 0.0, qs, vs3, tau, ws, a3)
        if code != OK:
            return code
        for i in range(n):
            qs[i] = q[i] + dt * vs3[i]
            vs4[i] = qd[i] + dt * a3[i]
        code = accelerations(tree, inertial, joint, limits, 0.0, qs, vs4, tau, ws, a4)
        if code != OK:
            return code
        sixth = dt / 6.0
        for i in range(n):
            q[i] += sixth * (qd[i] + 2.0 * vs2[i] + 2.0 * vs3[i] + vs4[i])
            qd[i] += sixth * (a1[i] + 2.0 * a2[i] + 2.0 * a3[i] + a4[i])
        if hard:
            hard_stop(lower, upper, q, qd)
        info[0] = s + 1
    return OK
