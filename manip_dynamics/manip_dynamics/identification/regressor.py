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
The joint-torque regressor: inverse dynamics as a linear function of the inertial parameters.

For a rigid body ``k`` the Newton-Euler wrench about its frame origin, in its own frame, is
linear in its ten standard parameters (Khalil and Dombre, *Modeling, Identification and
Control of Robots*, sec. 9.3 and 12.3; Siciliano and Khatib, *Springer Handbook of
Robotics*, ch. "Model identification", eq. for the Newton-Euler equations in terms of the
barycentric parameters; Atkeson, An and Hollerbach 1986)::

    f_k = m a + wd x h + w x (w x h)
    n_k = I_o wd + w x (I_o w) + h x a

with ``w``, ``wd`` the body's angular velocity and acceleration, ``a`` the linear acceleration
of its origin (gravity folded in as an upward base acceleration, Craig sec. 6.5),
``h = m c`` the first moment of mass and ``I_o = I_c + m (c.c 1 - c c^T)`` the rotational
inertia about the body origin (parallel-axis theorem, Craig eq. 6.25).  Joint ``i`` carries
the wrenches of every body in its subtree, moved to its frame by the inward transforms of
Craig eq. 6.51-6.52, and projects them on its axis (Craig eq. 6.53), so
``tau = Y(q, qd, qdd) pi`` with ``Y`` (n, p).

Parameter order (``pi``, model joint order, bodies as :class:`RobotModel` lumps them: a
joint's child link plus every link attached to it by fixed joints, in the child link's
frame):

* per body ``k`` (10 numbers): ``m, m cx, m cy, m cz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz`` with the
  inertia about the body frame origin, body axes, products of inertia signed as in URDF
  (Ixy = -integral x y dm);
* with ``friction=True``, per joint ``j`` (3 numbers): viscous ``fv`` [N m s/rad], Coulomb
  ``fc`` [N m] (times the model's smooth sign ``tanh(qd / friction_velocity)``) and a
  constant offset [N m] (a torque-sensor bias; the model's own offset is 0);
* with ``armature=True``, per joint the reflected rotor inertia ``ia`` [kg m^2].

Pinocchio's ``computeJointTorqueRegressor`` uses the same bodies and frames with the inertia
entries in the order ``Ixx, Ixy, Iyy, Ixz, Iyz, Izz``.
"""

from dataclasses import replace

from numba import njit
import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.algorithms._jit import INNER_OPTIONS, JIT_OPTIONS
from manip_dynamics.algorithms.kinematics import joint_transforms, outward_pass
from manip_dynamics.algorithms.packed import unpack
from manip_dynamics.algorithms.warm_states import state
from manip_dynamics.errors import InputError
from manip_dynamics.model.rigid_body_tree import BodyInertia

FloatArray = NDArray[np.float64]

#: Parameters per body, per joint's friction, per joint's armature.
BODY_PARAMETERS = 10
FRICTION_PARAMETERS = 3
#: Short names of a body's ten parameters ({k} is the 1-based joint index).
BODY_PARAMETER_NAMES = ('m{k}', 'm{k} c{k}x', 'm{k} c{k}y', 'm{k} c{k}z', 'I{k}xx', 'I{k}xy',
                        'I{k}xz', 'I{k}yy', 'I{k}yz', 'I{k}zz')
FRICTION_PARAMETER_NAMES = ('fv{k}', 'fc{k}', 'off{k}')
ARMATURE_PARAMETER_NAME = 'ia{k}'


@njit(**INNER_OPTIONS)
def _body_block(w, wd, a, blk):
    """
    Fill ``blk`` (6, 10): body wrench ``[f; n]`` about the origin per unit parameter.

    Newton-Euler equations in the standard parameters (Khalil and Dombre sec. 9.3):
    ``f = m a + (wd x + w x w x) h``, ``n = I_o wd + w x I_o w + h x a``.
    """
    blk[:, :] = 0.0
    wx, wy, wz = w[0], w[1], w[2]
    ax, ay, az = a[0], a[1], a[2]
    # column 0: mass
    blk[0, 0] = ax
    blk[1, 0] = ay
    blk[2, 0] = az
    # columns 1-3: first moment h; f = ([wd]x + [w]x[w]x) h, n = -[a]x h
    for k in range(3):
        e0 = 1.0 if k == 0 else 0.0
        e1 = 1.0 if k == 1 else 0.0
        e2 = 1.0 if k == 2 else 0.0
        # wd x e
        t0 = wd[1] * e2 - wd[2] * e1
        t1 = wd[2] * e0 - wd[0] * e2
        t2 = wd[0] * e1 - wd[1] * e0
        # w x (w x e)
        u0 = wy * e2 - wz * e1
        u1 = wz * e0 - wx * e2
        u2 = wx * e1 - wy * e0
        blk[0, 1 + k] = t0 + (wy * u2 - wz * u1)
        blk[1, 1 + k] = t1 + (wz * u0 - wx * u2)
        blk[2, 1 + k] = t2 + (wx * u1 - wy * u0)
        # e x a
        blk[3, 1 + k] = e1 * az - e2 * ay
        blk[4, 1 + k] = e2 * ax - e0 * az
        blk[5, 1 + k] = e0 * ay - e1 * ax
    # columns 4-9: Ixx Ixy Ixz Iyy Iyz Izz; I v = L(v) theta with
    # L(v) = [[vx vy vz 0 0 0], [0 vx 0 vy vz 0], [0 0 vx 0 vy vz]]
    for k in range(6):
        # L(wd)[:, k] and L(w)[:, k]
        if k == 0:
            l0, l1, l2, m0, m1, m2 = wd[0], 0.0, 0.0, wx, 0.0, 0.0
        elif k == 1:
            l0, l1, l2, m0, m1, m2 = wd[1], wd[0], 0.0, wy, wx, 0.0
        elif k == 2:
            l0, l1, l2, m0, m1, m2 = wd[2], 0.0, wd[0], wz, 0.0, wx
        elif k == 3:
            l0, l1, l2, m0, m1, m2 = 0.0, wd[1], 0.0, 0.0, wy, 0.0
        elif k == 4:
            l0, l1, l2, m0, m1, m2 = 0.0, wd[2], wd[1], 0.0, wz, wy
        else:
            l0, l1, l2, m0, m1, m2 = 0.0, 0.0, wd[2], 0.0, 0.0, wz
        blk[3, 4 + k] = l0 + (wy * m2 - wz * m1)
        blk[4, 4 + k] = l1 + (wz * m0 - wx * m2)
        blk[5, 4 + k] = l2 + (wx * m1 - wy * m0)


@njit(**JIT_OPTIONS)
def regressor_kernel(ints, flat, base_acc, q, qd, qdd, out):
    """
    Fill ``out`` (N, n, 10 n) with the rigid-body regressor of N states.

    :param ints: The packed tree and ``flat`` the packed model
        (:mod:`manip_dynamics.algorithms.packed`; only the kinematics are read), so the
        shared kinematics kernels are compiled for one array layout.
    :param base_acc: Acceleration of the root [m/s^2], (3,): ``-gravity``.
    :param q: Joint positions (N, n); ``qd``, ``qdd`` likewise.
    :return: 0, or ``1 + 3 k + a`` when state ``k`` has a non-finite entry in argument
        ``a`` (0 q, 1 qd, 2 qdd), as the inverse-dynamics kernel reports it.
    """
    parent, kind, axis, R_tree, p_tree, _, _, _, _ = unpack(ints, flat)
    N, n = q.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    w = np.empty((n, 3))
    wd = np.empty((n, 3))
    vd = np.empty((n, 3))
    blk = np.empty((6, 10))
    tmp = np.empty((6, 10))
    for s in range(N):
        bad = 0
        for i in range(n):
            if not np.isfinite(q[s, i]):
                bad = 1
                break
        if bad == 0:
            for i in range(n):
                if not np.isfinite(qd[s, i]):
                    bad = 2
                    break
        if bad == 0:
            for i in range(n):
                if not np.isfinite(qdd[s, i]):
                    bad = 3
                    break
        if bad:
            return bad + 3 * s
        joint_transforms(kind, axis, R_tree, p_tree, q[s], R, p)
        outward_pass(parent, kind, axis, R, p, base_acc, qd[s], qdd[s], w, wd, vd)
        o = out[s]
        o[:, :] = 0.0
        for j in range(n):
            _body_block(w[j], wd[j], vd[j], blk)
            i = j
            col = 10 * j
            while True:
                a0, a1, a2 = axis[i, 0], axis[i, 1], axis[i, 2]
                r = 3 if kind[i] == 0 else 0
                for c in range(10):
                    o[i, col + c] = a0 * blk[r, c] + a1 * blk[r + 1, c] + a2 * blk[r + 2, c]
                par = parent[i]
                if par < 0:
                    break
                # Craig eq. 6.51-6.52: f' = R f, n' = R n + p x (R f)
                Ri = R[i]
                px, py, pz = p[i, 0], p[i, 1], p[i, 2]
                for c in range(10):
                    f0 = Ri[0, 0] * blk[0, c] + Ri[0, 1] * blk[1, c] + Ri[0, 2] * blk[2, c]
                    f1 = Ri[1, 0] * blk[0, c] + Ri[1, 1] * blk[1, c] + Ri[1, 2] * blk[2, c]
                    f2 = Ri[2, 0] * blk[0, c] + Ri[2, 1] * blk[1, c] + Ri[2, 2] * blk[2, c]
                    n0 = Ri[0, 0] * blk[3, c] + Ri[0, 1] * blk[4, c] + Ri[0, 2] * blk[5, c]
                    n1 = Ri[1, 0] * blk[3, c] + Ri[1, 1] * blk[4, c] + Ri[1, 2] * blk[5, c]
                    n2 = Ri[2, 0] * blk[3, c] + Ri[2, 1] * blk[4, c] + Ri[2, 2] * blk[5, c]
                    tmp[0, c] = f0
                    tmp[1, c] = f1
                    tmp[2, c] = f2
                    tmp[3, c] = n0 + (py * f2 - pz * f1)
                    tmp[4, c] = n1 + (pz * f0 - px * f2)
                    tmp[5, c] = n2 + (px * f1 - py * f0)
                blk, tmp = tmp, blk  # no array slice assignment: numba's error-message code
                i = par
    return 0


# ---------------------------------------------------------------------- parameters
def body_parameters(mass: float, com: ArrayLike, inertia_com: ArrayLike) -> FloatArray:
    """
    Return a body's ten standard parameters from mass, centre of mass and inertia about it.

    :param mass: Mass m [kg].
    :param com: Centre of mass c in the body frame [m], shape (3,).
    :param inertia_com: Inertia about the centre of mass, body axes [kg m^2], (3, 3).
    :return: ``[m, m cx, m cy, m cz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]`` with the inertia about
        the body origin (Craig eq. 6.25), shape (10,).
    """
    c = np.asarray(com, dtype=np.float64)
    i_o = np.asarray(inertia_com, dtype=np.float64) + mass * (np.dot(c, c) * np.eye(3)
                                                              - np.outer(c, c))
    return np.array([mass, mass * c[0], mass * c[1], mass * c[2], i_o[0, 0], i_o[0, 1],
                     i_o[0, 2], i_o[1, 1], i_o[1, 2], i_o[2, 2]])


def inertia_matrix(params: ArrayLike) -> FloatArray:
    """Return the (3, 3) inertia about the origin of a body's ten parameters."""
    p = np.asarray(params, dtype=np.float64)
    return np.array([[p[4], p[5], p[6]], [p[5], p[7], p[8]], [p[6], p[8], p[9]]])


def body_from_parameters(params: ArrayLike) -> tuple[float, FloatArray, FloatArray]:
    """
    Return ``(mass, com, inertia about the com)`` of a body's ten standard parameters.

    Inverse of :func:`body_parameters`; a body with zero mass gets ``com = 0``.

    :param params: ``[m, m c, I_o (6)]``, shape (10,).
    :return: Mass [kg], centre of mass (3,) [m], inertia about it (3, 3) [kg m^2].
    """
    p = np.asarray(params, dtype=np.float64)
    mass = float(p[0])
    c = p[1:4] / mass if mass > 0.0 else np.zeros(3)
    i_c = inertia_matrix(p) - mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    return mass, c, i_c


def pseudo_inertia(params: ArrayLike) -> FloatArray:
    """
    Return the 4x4 pseudo-inertia matrix of a body's ten parameters (Wensing et al. 2017).

    ``J = [[Sigma, h], [h^T, m]]`` with ``Sigma = tr(I_o)/2 1 - I_o`` the second moment of
    the mass distribution; the parameters are physically consistent (a real, possibly
    degenerate, mass distribution) iff ``J`` is positive semi-definite (Wensing, Kim and
    Slotine, "Linear matrix inequalities for physically consistent inertial parameter
    identification", IEEE RA-L 2017, Thm. 1).

    :param params: Shape (10,).
    :return: J, shape (4, 4).
    """
    p = np.asarray(params, dtype=np.float64)
    i_o = inertia_matrix(p)
    out = np.empty((4, 4))
    out[:3, :3] = 0.5 * np.trace(i_o) * np.eye(3) - i_o
    out[:3, 3] = p[1:4]
    out[3, :3] = p[1:4]
    out[3, 3] = p[0]
    return out


def parameters_from_pseudo_inertia(j: ArrayLike) -> FloatArray:
    """Return the ten parameters of a pseudo-inertia matrix (inverse of :func:`pseudo_inertia`)."""
    j = np.asarray(j, dtype=np.float64)
    sigma = j[:3, :3]
    i_o = np.trace(sigma) * np.eye(3) - sigma
    return np.array([j[3, 3], j[0, 3], j[1, 3], j[2, 3], i_o[0, 0], i_o[0, 1], i_o[0, 2],
                     i_o[1, 1], i_o[1, 2], i_o[2, 2]])


def parameter_count(dof: int, *, friction: bool = False, armature: bool = False) -> int:
    """Return the length p of ``pi`` for ``dof`` joints and the chosen extra terms."""
    return dof * (BODY_PARAMETERS + (FRICTION_PARAMETERS if friction else 0)
                  + (1 if armature else 0))


def parameter_names(dof: int, *, friction: bool = False, armature: bool = False
                    ) -> list[str]:
    """
    Return the short names of ``pi``'s entries, e.g. ``'m4 c4x'``, ``'I2zz'``, ``'fv3'``.

    Indices are 1-based model joint indices (body k is moved by joint k).
    """
    names = [fmt.format(k=k + 1) for k in range(dof) for fmt in BODY_PARAMETER_NAMES]
    if friction:
        names += [fmt.format(k=k + 1) for k in range(dof) for fmt in FRICTION_PARAMETER_NAMES]
    if armature:
        names += [ARMATURE_PARAMETER_NAME.format(k=k + 1) for k in range(dof)]
    return names


def inertial_parameters(model, *, friction: bool = False, armature: bool = False
                        ) -> FloatArray:
    """
    Return the model's parameter vector ``pi`` (payloads included), order of the module doc.

    ``regressor(model, q, qd, qdd, friction=f, armature=a) @ inertial_parameters(model,
    friction=f, armature=a)`` equals ``model.inverse_dynamics(q, qd, qdd,
    include_friction=f, include_armature=a)``.

    :param model: A :class:`~manip_dynamics.RobotModel`.
    :param friction: Append ``fv, fc, offset`` per joint (offset 0).
    :param armature: Append the rotor inertias.
    :return: Shape (p,).
    """
    inertia = model.body_inertia
    parts = [body_parameters(inertia.mass[k], inertia.com[k], inertia.inertia[k])
             for k in range(model.dof)]
    out = [np.concatenate(parts)]
    if friction:
        out.append(np.column_stack([model.damping, model.coulomb_friction,
                                    np.zeros(model.dof)]).reshape(-1))
    if armature:
        out.append(model.armature)
    return np.concatenate(out)


def regressor(model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, *, friction: bool = False,
              armature: bool = False) -> FloatArray:
    """
    Return the joint-torque regressor ``Y`` with ``tau = Y pi`` (module doc for ``pi``).

    Rigid-body columns come from one outward pass (Craig eq. 6.45-6.47) and the body
    wrenches of Khalil and Dombre sec. 9.3 moved inward (Craig eq. 6.51-6.53); friction
    columns are ``qd``, ``tanh(qd / friction_velocity)`` and 1 (Craig sec. 6.11), armature
    columns ``qdd``.  Cost O(n d) per state (d: tree depth), against O(n) for inverse
    dynamics.

    :param model: A :class:`~manip_dynamics.RobotModel`.
    :param q: Joint positions [rad or m], shape (n,) or (N, n).
    :param qd: Joint velocities, same shape.
    :param qdd: Joint accelerations, same shape.
    :param friction: Append the friction columns.
    :param armature: Append the armature columns.
    :return: Y, shape (n, p) or (N, n, p).
    :raises InputError: Wrong shape, NaN or inf, or a floating-point overflow (the message
        names the largest input).
    """
    names = ('q', 'qd', 'qdd')
    (q2, qd2, qdd2), single = model.state_batch(names, q, qd, qdd)
    n = model.dof
    count = q2.shape[0]
    p = parameter_count(n, friction=friction, armature=armature)
    out = np.zeros((count, n, p))
    body = np.empty((count, n, BODY_PARAMETERS * n))
    ints, flat = model.packed
    code = regressor_kernel(ints, flat, -model.gravity, q2, qd2, qdd2, body)
    if code:
        # the kernel's status: 1 + 3 k + a for argument a of state k not finite
        k, a = divmod(code - 1, len(names))
        raise model.state_error(names, [q2, qd2, qdd2], k, a)
    if not np.isfinite(body).all():
        # every input finite (checked by the kernel), the products not: an overflow
        k = int(np.argmax(~np.isfinite(body.reshape(count, -1)).all(axis=1)))
        raise model.state_error(names, [q2, qd2, qdd2], k)
    out[:, :, :BODY_PARAMETERS * n] = body
    col = BODY_PARAMETERS * n
    rows = np.arange(n)
    if friction:
        cols = col + FRICTION_PARAMETERS * rows
        out[:, rows, cols] = qd2
        out[:, rows, cols + 1] = np.tanh(qd2 / model.friction_velocity)
        out[:, rows, cols + 2] = 1.0
        col += FRICTION_PARAMETERS * n
    if armature:
        out[:, rows, col + rows] = qdd2
    return out[0] if single else out


def model_with_parameters(model, params: ArrayLike, *, friction: bool = False,
                          armature: bool = False):
    """
    Return a new model whose bodies (and joint terms) carry the parameters ``params``.

    The kinematics, gravity, limits and friction velocity are the model's; payloads are
    not copied (``params`` already holds whatever the bodies carry).  Friction offsets in
    ``params`` are ignored (the model has none).  The parameters are not checked for
    physical consistency: any real numbers give a model whose inverse dynamics equal
    ``Y pi`` (useful for tests and least-squares predictions).

    :param model: The model to copy.
    :param params: ``pi``, shape (p,), order of the module doc.
    :param friction: ``params`` holds the friction block.
    :param armature: ``params`` holds the armature block.
    :return: A :class:`~manip_dynamics.RobotModel`.
    :raises InputError: Wrong length, NaN or inf, or negative friction/armature.
    """
    n = model.dof
    p = np.asarray(params, dtype=np.float64).reshape(-1)
    expected = parameter_count(n, friction=friction, armature=armature)
    if p.shape[0] != expected or not np.all(np.isfinite(p)):
        raise InputError('parameters must be %d finite numbers, got %d' % (expected, p.size))
    mass = np.empty(n)
    com = np.empty((n, 3))
    inertia = np.empty((n, 3, 3))
    for k in range(n):
        mass[k], com[k], inertia[k] = body_from_parameters(p[10 * k:10 * k + 10])
    tree = replace(model.tree, inertia=BodyInertia(mass, com, inertia))
    damping, coulomb, arm = model.damping, model.coulomb_friction, model.armature
    col = BODY_PARAMETERS * n
    if friction:
        block = p[col:col + FRICTION_PARAMETERS * n].reshape(n, FRICTION_PARAMETERS)
        damping, coulomb = block[:, 0].copy(), block[:, 1].copy()
        col += FRICTION_PARAMETERS * n
    if armature:
        arm = p[col:col + n].copy()
    # a model of the caller's class, built from below: identification never imports
    # the facade (docs/ARCHITECTURE.md)
    return type(model)(tree, gravity=model.gravity, damping=damping, friction=coulomb,
                       armature=arm, friction_velocity=model.friction_velocity)


def _warm_regressor(model) -> None:
    q, qd, qdd = state(model)
    regressor(model, q, qd, qdd, friction=True, armature=True)


#: Collected by :mod:`manip_dynamics.precompile`.
PRECOMPILE_STEPS = [('identification regressor', _warm_regressor)]
