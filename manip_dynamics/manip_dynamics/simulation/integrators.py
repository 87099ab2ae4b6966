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
One call of :func:`advance` clamps the commanded torque and runs ``steps`` steps inside one
compiled kernel; it takes the packed model (:mod:`manip_dynamics.algorithms.packed`), one
parameter array (:func:`pack_parameters`) and the state, so a call from Python costs one
dispatch of ten arguments through the bound entry point (:data:`KERNELS`).

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

from manip_dynamics.algorithms._jit import EntryPoints, INNER
from manip_dynamics.algorithms.crba import crba_state
from manip_dynamics.algorithms.forward_dynamics import cholesky_solve
from manip_dynamics.algorithms.kinematics import all_finite, joint_transforms
from manip_dynamics.algorithms.packed import unpack
from manip_dynamics.algorithms.rnea import rnea_state
from manip_dynamics.simulation.joint_limits import hard_stop, limit_torques

SEMI_IMPLICIT_EULER = 0
RK4 = 1
#: Return codes of :func:`advance` and :func:`accelerations`.
OK = 0
NOT_FINITE = 1
NOT_POSITIVE_DEFINITE = 2
#: The commanded torque has a NaN/inf entry (nothing was stepped).
BAD_TORQUE = 3

_JIT = {'cache': True, 'nogil': True}

# scalar slots of the parameter array; then base_acc (3,) and seven (n,) blocks
_DT, _EPS, _FRICTION, _ARMATURE, _MODE, _OMEGA, _CLAMP, _METHOD = range(8)
_BASE = 8
_JOINTS = 11


def pack_parameters(n: int, *, dt: float, method: int, base_acc: np.ndarray,
                    friction: bool, damping: np.ndarray, coulomb: np.ndarray,
                    friction_velocity: float, armature: bool, mode: int, omega: float,
                    lower: np.ndarray, upper: np.ndarray, k_user: np.ndarray,
                    c_user: np.ndarray, clamp: bool, effort: np.ndarray) -> np.ndarray:
    """
    Return the parameter array of :func:`advance` and :func:`accelerations`.

    :param n: Number of joints.
    :param dt: Fixed step [s]; ``method`` SEMI_IMPLICIT_EULER or RK4.
    :param base_acc: ``-gravity`` [m/s^2], (3,).
    :param friction: Apply viscous ``damping`` and Coulomb ``coulomb`` friction (n,) with
        the smooth-sign width ``friction_velocity``.
    :param armature: Add the packed model's rotor inertias to M's diagonal.
    :param mode: Limit mode (0 none, 1 spring, 2 hard), ``omega`` the default contact
        frequency, ``lower``/``upper``/``k_user``/``c_user`` (n,) as
        :func:`~manip_dynamics.simulation.joint_limits.limit_torques`.
    :param clamp: Clamp the commanded torque to ``+-effort`` (n,).
    """
    head = np.array([dt, friction_velocity, float(friction), float(armature), float(mode),
                     omega, float(clamp), float(method)], dtype=np.float64)
    blocks = [np.asarray(b, dtype=np.float64).reshape(n) for b in (
        damping, coulomb, lower, upper, k_user, c_user, effort)]
    return np.ascontiguousarray(np.concatenate([head, np.asarray(base_acc, dtype=np.float64)
                                                .reshape(3)] + blocks))


@njit(**_JIT, **INNER)
def _accelerations(tree, params, h, q, qd, tau, fext, ws, out):
    """
    Joint accelerations of one state, with friction, limit contact and implicit terms.

    :param tree: The tuple :func:`~manip_dynamics.algorithms.packed.unpack` returns.
    :param params: From :func:`pack_parameters`.
    :param h: Step of the linearly implicit treatment of the diagonal stiff terms [s];
        0 gives the plain explicit accelerations.
    :param q: Joint positions (n,); ``qd`` velocities (n,); ``tau`` applied torques (n,);
        ``fext`` (n, 6) body wrenches ``[f; tau]`` the environment applies.
    :param ws: Scratch arrays, as :func:`advance` allocates them.
    :param out: Accelerations written here (n,).
    :return: OK, NOT_FINITE (a non-finite state) or NOT_POSITIVE_DEFINITE.
    """
    parent, kind, axis, R_tree, p_tree, mass, com, inertia, armature = tree
    R, vec3, M, Ioc, vecn, scratch = ws
    n = q.shape[0]
    if not (all_finite(q) and all_finite(qd)):
        return NOT_FINITE
    p = vec3[0]
    joint_transforms(kind, axis, R_tree, p_tree, q, R, p)
    zero = vecn[0]
    use_fext = n > 0  # a variable, not the literal True: one compiled rnea_state for all
    # V + G: one Newton-Euler pass with qdd = 0 (Craig sec. 6.12)
    rnea_state(parent, kind, axis, mass, com, inertia, params[_BASE:_BASE + 3], R, p, qd,
               zero, fext, use_fext, vec3[1], vec3[2], vec3[3], vec3[4], vec3[5], out)
    for i in range(n):
        out[i] = tau[i] - out[i]
    crba_state(parent, kind, axis, mass, com, inertia, armature, params[_ARMATURE] != 0.0,
               R, p, vecn[1], vec3[6], Ioc, M)
    jb = params[_JOINTS:_JOINTS + 7 * n].reshape((7, n))  # per-joint blocks
    if params[_FRICTION] != 0.0:
        eps = params[_EPS]
        damping = jb[0]
        coulomb = jb[1]
        for i in range(n):
            th = np.tanh(qd[i] / eps)
            out[i] -= damping[i] * qd[i] + coulomb[i] * th
            # slope of the friction torque, taken implicitly
            M[i, i] += h * (damping[i] + coulomb[i] / eps * (1.0 - th * th))
    if params[_MODE] == 1.0:
        tau_lim = vecn[2]
        stiff = vecn[3]
        damp = vecn[4]
        if not limit_torques(jb[2], jb[3], jb[4], jb[5], params[_OMEGA], q, qd, M, scratch,
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


#: Signature of :func:`advance`.
ADVANCE_SIG = ('i8(i8[::1], f8[::1], f8[::1], i8, f8[::1], f8[::1], f8[::1], f8[::1], '
               'f8[:, :], i8[::1])')  # fext in any layout, as the facade's kernels take it


@njit(**_JIT)
def advance(ints, flat, params, steps, q, qd, tau, applied, fext, info):
    """
    Advance ``(q, qd)`` in place by ``steps`` fixed steps with the commanded torque ``tau``.

    ``applied`` (n,) receives ``tau`` clamped to the effort limits when the parameters ask
    for it; that torque is held over every step.  With ``steps == 0`` nothing moves and
    ``applied`` receives instead the explicit accelerations at ``(q, qd)`` under the
    clamped torque (the right-hand side of the 'adaptive' integrator).

    :param ints: Packed tree; ``flat`` the packed model; ``params`` from
        :func:`pack_parameters` (step, method, friction, limits, clamping).
    :param steps: Number of steps.
    :param q: Joint positions (n,), updated in place; ``qd`` likewise.
    :param fext: (n, 6) body wrenches ``[f; tau]`` the environment applies.
    :param info: int64 (1,): the number of steps completed is written to ``info[0]``.
    :return: OK, BAD_TORQUE (``tau`` not finite: nothing stepped) or the code of the
        failing :func:`accelerations` call; ``q``, ``qd`` then hold the state after the
        last completed step.
    """
    n = q.shape[0]
    info[0] = 0
    clamp = params[_CLAMP] != 0.0
    jb = params[_JOINTS:_JOINTS + 7 * n].reshape((7, n))  # per-joint blocks
    effort = jb[6]
    for i in range(n):
        v = tau[i]
        if not np.isfinite(v):
            return BAD_TORQUE
        if clamp:
            if v > effort[i]:
                v = effort[i]
            elif v < -effort[i]:
                v = -effort[i]
        applied[i] = v
    tree = unpack(ints, flat)
    vecn = np.empty((5, n))
    for i in range(n):
        vecn[0, i] = 0.0  # the zero accelerations of the bias pass
    ws = (np.empty((n, 3, 3)), np.empty((7, n, 3)), np.empty((n, n)), np.empty((n, 3, 3)),
          vecn, np.empty((n + 1, n)))
    acc = np.empty((8, n))
    explicit = steps == 0  # only the accelerations, into ``applied``
    hard = params[_MODE] == 2.0
    lower = jb[2]
    upper = jb[3]
    dt = params[_DT]
    rk4 = params[_METHOD] == RK4
    stages = 4 if rk4 and not explicit else 1
    # semi-implicit Euler treats the stiff diagonal terms implicitly (h = dt)
    h = 0.0 if rk4 or explicit else dt
    V = acc[0:4]  # stage velocities
    A = acc[4:8]  # stage accelerations
    qs = np.empty(n)
    # one call site of _accelerations for both methods keeps the compiled kernel small
    for s in range(1 if explicit else steps):
        for k in range(stages):
            c = 0.0 if k == 0 else (0.5 * dt if k < 3 else dt)
            for i in range(n):
                qs[i] = q[i] + c * V[k - 1, i] if k > 0 else q[i]
                V[k, i] = qd[i] + c * A[k - 1, i] if k > 0 else qd[i]
            code = _accelerations(tree, params, h, qs, V[k], applied, fext, ws, A[k])
            if code != OK:
                return code
        if explicit:
            for i in range(n):
                applied[i] = A[0, i]
            return OK
        if rk4:
            sixth = dt / 6.0
            for i in range(n):
                q[i] += sixth * (V[0, i] + 2.0 * V[1, i] + 2.0 * V[2, i] + V[3, i])
                qd[i] += sixth * (A[0, i] + 2.0 * A[1, i] + 2.0 * A[2, i] + A[3, i])
        else:
            for i in range(n):
                qd[i] += dt * A[0, i]
                q[i] += dt * qd[i]
        if hard:
            hard_stop(lower, upper, q, qd)
        info[0] = s + 1
    return OK


#: Bound entry points of the simulator kernels.
KERNELS = EntryPoints({'advance': (advance, ADVANCE_SIG)})
