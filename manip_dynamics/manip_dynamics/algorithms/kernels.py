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
The facade's three compiled entry kernels and their bound entry points.

Every entry takes the packed model (:mod:`.packed`) and N states stored one after the other
(N = 1: one state), copies each state into contiguous scratch (so each inner kernel is
compiled for one array layout only), runs the algorithm of its ``op`` code, checks the
result for overflow and writes it out.  One entry serves several functions so that the
library compiles three kernels, not ten: the compile time of an entry is dominated by
what all its callees share (the cold warm-up CPU time).

Status codes: 0, or ``1 + c k + a`` for state ``k`` with ``c`` = the number of checked
state arguments + 1, ``a`` the index of the first non-finite argument or ``c - 1`` when
the result is not finite (a floating-point overflow); ``-1 - k`` when forward dynamics
meets a mass matrix that is not positive definite in state ``k``.

``KERNELS.<name>(...)`` calls an entry with no numba type dispatch (see
:class:`~manip_dynamics.algorithms._jit.EntryPoints`); it is compiled, or loaded from
numba's cache, on first use; ``KERNELS.bind_all()`` does that for all of them.
"""

from numba import njit
import numpy as np

from manip_dynamics.algorithms._jit import EntryPoints, JIT_OPTIONS
from manip_dynamics.algorithms.aba import aba_state
from manip_dynamics.algorithms.coriolis import coriolis_state
from manip_dynamics.algorithms.crba import crba_state
from manip_dynamics.algorithms.energy import potential_state
from manip_dynamics.algorithms.forward_dynamics import cholesky_solve
from manip_dynamics.algorithms.jacobians import (
    bias_acceleration_state, jacobian_state, pose_state)
from manip_dynamics.algorithms.kinematics import (
    joint_transforms, load_state, outward_pass, store_rows, store_state, world_poses)
from manip_dynamics.algorithms.packed import unpack
from manip_dynamics.algorithms.rnea import rnea_state, still_pair_state
from manip_dynamics.algorithms.warm_states import batch, state, tip

_JIT = JIT_OPTIONS

#: ``op`` codes of :func:`dynamics`.
INVERSE_DYNAMICS = 0
FD_CHOLESKY = 1
FD_ABA = 2
#: The path terms ``A = M(q) q'``, ``B = M(q) q'' + C(q, q') q'``, ``C = g(q)`` of
#: ``tau = A sdd + B sd^2 + C`` along a path ``q(s)`` (Craig eq. 6.59 with ``qd = q' sd``,
#: ``qdd = q' sdd + q'' sd^2``): ``qd`` holds q', ``x`` q'', ``out`` (3 N n,) A, B, C per
#: state; one set of joint transforms per state, B by Newton-Euler, A and C by one outward
#: pass of the arm at rest (rnea.still_pair_state).
PATH_TERMS = 3
#: ``op`` codes of :func:`matrices`.
MASS_MATRIX = 0
CORIOLIS_MATRIX = 1
#: ``op`` codes of :func:`kinematics`.
POSE = 0
JACOBIAN = 1
BIAS_ACCELERATION = 2
POTENTIAL_ENERGY = 3

DYNAMICS_SIG = 'i8(i8, i8[::1], f8[::1], b1, f8[::1], f8[:], f8[:], f8[:], f8[:, :], f8[:])'


@njit(**_JIT)
def dynamics(op, ints, flat, use_armature, base_acc, q, qd, x, fext, out):
    """
    Inverse (``op`` INVERSE_DYNAMICS), forward (FD_CHOLESKY, FD_ABA) dynamics, path terms.

    :param use_armature: Add the packed rotor inertias to M's diagonal (forward dynamics
        and PATH_TERMS only).
    :param base_acc: Acceleration of the root [m/s^2], (3,): ``-gravity``, or zeros.
    :param q: Joint positions (N n,); ``qd`` velocities; ``x`` accelerations (inverse) or
        torques net of friction (forward).
    :param fext: Body wrenches ``[f; tau]`` in body frames about body origins: (0, 6) for
        none, (n, 6) shared by all states or (N n, 6).
    :param out: Torques or accelerations written here, (N n,); PATH_TERMS: (3 N n,).
    :return: Status code, 4 per state (q, qd, x, result).
    """
    parent, kind, axis, R_tree, p_tree, mass, com, inertia, armature = unpack(ints, flat)
    n = parent.shape[0]
    N = q.shape[0] // n if n else 0
    aba = op == FD_ABA
    chol = op == FD_CHOLESKY
    terms = op == PATH_TERMS
    # few allocations (about 30 ns each; a reshaped view of one buffer costs about as
    # much): R and the (n, 3, 3) blocks of ABA or CRBA share one, as C-ordered slices
    mats = np.empty((5 if aba else (2 if chol else 1), n, 3, 3))
    R = mats[0]
    vec = np.empty((18 if aba else (8 if terms else 7), n, 3))
    st = np.empty((7, n))  # q, qd, x, result, zeros, two scratch rows
    if aba or chol:
        blocks = mats[1:]
        if aba:
            blk = np.empty((1, 3, 3))
        M = np.empty((n if chol else 0, n))
    zero = st[4]
    for i in range(n):
        zero[i] = 0.0
    rows = fext.shape[0]
    use_fext = rows > 0
    fe = fext  # (0, 6) (not read) or (n, 6); per state below when (N n, 6)
    # the views each state uses, made once (a view costs a few ns per state)
    q_s, qd_s, x_s, res, s5, s6 = st[0], st[1], st[2], st[3], st[5], st[6]
    p, w, wd, vd, f, t = vec[0], vec[1], vec[2], vec[3], vec[4], vec[5]
    acc_in = zero if chol else x_s
    # PATH_TERMS: the root's acceleration without gravity, in the buffer's extra row (the
    # other ops allocate nothing for it)
    still = vec[7, 0] if terms and n else base_acc
    if terms and n:
        for i in range(3):
            still[i] = 0.0
    for k in range(N):
        lo = k * n
        if not load_state(q, lo, q_s):
            return 1 + 4 * k
        if not load_state(qd, lo, qd_s):
            return 2 + 4 * k
        if not load_state(x, lo, x_s):
            return 3 + 4 * k
        if rows > n:
            fe = fext[lo:lo + n]
        joint_transforms(kind, axis, R_tree, p_tree, q_s, R, p)
        if aba:
            if not aba_state(parent, kind, axis, mass, com, inertia, armature, use_armature,
                             base_acc, R, p, qd_s, x_s, fe, use_fext, vec[7:], s5, s6,
                             blocks, blk, res):
                return -1 - k
        elif terms:
            # B = M q'' + C(q, q') q' without gravity, then A = M q' and C = g(q)
            rnea_state(parent, kind, axis, mass, com, inertia, still, R, p, qd_s, x_s,
                       fe, False, w, wd, vd, f, t, s6)
            still_pair_state(parent, kind, axis, mass, com, inertia, base_acc, R, p, qd_s,
                             wd, vd, w, f, t, s5, res)
            if use_armature:
                for i in range(n):
                    s5[i] += armature[i] * qd_s[i]
                    s6[i] += armature[i] * x_s[i]
            if not (store_state(s5, out, 3 * lo) and store_state(s6, out, 3 * lo + n)
                    and store_state(res, out, 3 * lo + 2 * n)):
                return 4 + 4 * k
            continue
        else:
            rnea_state(parent, kind, axis, mass, com, inertia, base_acc, R, p, qd_s, acc_in,
                       fe, use_fext, w, wd, vd, f, t, res)
            if chol:
                # Craig sec. 6.12: M qdd = tau - (V + G), M by CRBA, Cholesky solve
                for i in range(n):
                    res[i] = x_s[i] - res[i]
                crba_state(parent, kind, axis, mass, com, inertia, armature, use_armature, R,
                           p, s5, vec[6], blocks[0], M)
                if not cholesky_solve(M, res):
                    return -1 - k
        if not store_state(res, out, lo):
            return 4 + 4 * k
    return 0


MATRICES_SIG = 'i8(i8, i8[::1], f8[::1], b1, f8[:], f8[:], f8[:, :])'


@njit(**_JIT)
def matrices(op, ints, flat, use_armature, q, qd, out):
    """
    Compute the mass matrix M (``op`` MASS_MATRIX, ``qd`` not read) or the Coriolis matrix.

    :param use_armature: Add the packed rotor inertias to M's diagonal.
    :param q: Joint positions (N n,); ``qd`` velocities (N n,).
    :param out: The (n, n) matrices, stacked: (N n, n).
    :return: Status code, 2 per state (q, result) for M, 3 (q, qd, result) for C.
    """
    parent, kind, axis, R_tree, p_tree, mass, com, inertia, armature = unpack(ints, flat)
    n = parent.shape[0]
    N = q.shape[0] // n if n else 0
    cor = op == CORIOLIS_MATRIX
    c = 3 if cor else 2
    R = np.empty((2, n, 3, 3))
    vec = np.empty((2, n, 3))
    st = np.empty((3, n))
    sixes = np.empty((3 if cor else 0, n, 6))
    blocks = np.empty((2 if cor else 1, n, 6, 6))
    Ioc = np.empty((n, 3, 3))
    abg = np.empty((3, 6))
    res = np.empty((n, n))
    # the views each state uses, made once
    q_s, qd_s, s2, Rb, Rw, p, v1 = st[0], st[1], st[2], R[0], R[1], vec[0], vec[1]
    blk0 = blocks[0]
    for k in range(N):
        lo = k * n
        if not load_state(q, lo, q_s):
            return 1 + c * k
        joint_transforms(kind, axis, R_tree, p_tree, q_s, Rb, p)
        if cor:
            if not load_state(qd, lo, qd_s):
                return 2 + c * k
            coriolis_state(parent, kind, axis, mass, com, inertia, Rb, p, qd_s, Rw, v1,
                           sixes[0], sixes[1], sixes[2], blk0, blocks[1], abg, res)
        else:
            crba_state(parent, kind, axis, mass, com, inertia, armature, use_armature, Rb,
                       p, s2, v1, Ioc, res)
        if not store_rows(res, out, lo):
            return c + c * k
    return 0


KINEMATICS_SIG = ('i8(i8, i8[::1], f8[::1], i8, f8[:, ::1], b1, f8[::1], f8[:], f8[:], '
                  'f8[:, :])')


@njit(**_JIT)
def kinematics(op, ints, flat, body, T_body_link, local, gravity, q, qd, out):  # noqa: N803
    """
    Link poses, Jacobians, ``dJ/dt qd`` or potential energies (``op`` codes above).

    :param body: The link's body (-1: fixed to the root); ``T_body_link`` (4, 4) the link
        in its body's frame; ``local``: link axes (True) or root axes.
    :param gravity: Gravity [m/s^2], (3,) (POTENTIAL_ENERGY only).
    :param q: Joint positions (N n,); ``qd`` velocities (BIAS_ACCELERATION only).
    :param out: Stacked results: POSE (4 N, 4), JACOBIAN (6 N, n), BIAS_ACCELERATION
        (N, 6), POTENTIAL_ENERGY (N, 1).
    :return: Status code, 3 per state (q, qd, result) for BIAS_ACCELERATION, else 2.
    """
    parent, kind, axis, R_tree, p_tree, mass, com, _, _ = unpack(ints, flat)
    n = parent.shape[0]
    bias = op == BIAS_ACCELERATION
    c = 3 if bias else 2
    rows = 4 if op == POSE else (6 if op == JACOBIAN else 1)
    N = q.shape[0] // n if n else out.shape[0] // rows
    R = np.empty((2, n, 3, 3))
    vec = np.empty((5, n, 3))
    st = np.empty((3, n))  # q, qd, zeros (np.empty and loops: np.zeros costs compile time)
    zero3 = np.empty(3)
    for i in range(3):
        zero3[i] = 0.0
    for i in range(n):
        st[1, i] = 0.0
        st[2, i] = 0.0
    Rl = np.empty((3, 3))
    res = np.empty((rows, out.shape[1]))
    # the views each state uses, made once
    q_s, qd_s, zero = st[0], st[1], st[2]
    Rb, R0, p, p0 = R[0], R[1], vec[0], vec[1]
    for k in range(N):
        if not load_state(q, k * n, q_s):
            return 1 + c * k
        if bias and not load_state(qd, k * n, qd_s):
            return 2 + c * k
        joint_transforms(kind, axis, R_tree, p_tree, q_s, Rb, p)
        world_poses(parent, Rb, p, R0, p0)
        if op == POSE:
            pose_state(R0, p0, body, T_body_link, res)
        elif op == JACOBIAN:
            jacobian_state(parent, kind, axis, R0, p0, body, T_body_link, local, Rl, res)
        elif bias:
            outward_pass(parent, kind, axis, Rb, p, zero3, qd_s, zero, vec[2], vec[3],
                         vec[4])
            bias_acceleration_state(R0, vec[2], vec[3], vec[4], body, T_body_link, local,
                                    res[0])
        else:
            res[0, 0] = potential_state(mass, com, gravity, R0, p0)
        if not store_rows(res, out, rows * k):
            return c + c * k
    return 0


KERNELS = EntryPoints({'dynamics': (dynamics, DYNAMICS_SIG),
                       'matrices': (matrices, MATRICES_SIG),
                       'kinematics': (kinematics, KINEMATICS_SIG)})


# ---------------------------------------------------------------------- precompile steps
def _warm_inverse(model) -> None:
    from manip_dynamics.batching import PARALLEL_MIN_STATES
    q, qd, qdd = state(model)
    model.inverse_dynamics(q, qd, qdd)
    model.inverse_dynamics(q, qd, qdd, external_wrenches={tip(model): np.ones(6)},
                           include_friction=True, include_armature=True)
    qs, qds, qdds = batch(model)
    model.inverse_dynamics(qs, qds, qdds)
    model.inverse_dynamics(qs, qds, qdds, external_wrenches={tip(model): np.ones((3, 6))})
    model.inverse_dynamics(*batch(model, PARALLEL_MIN_STATES))


def _warm_bias(model) -> None:
    q, qd, _ = state(model)
    qs, qds, _ = batch(model)
    for f in (model.gravity_torques, model.friction_torques):
        f(q)
        f(qs)
    for f in (model.coriolis_torques, model.nonlinear_effects):
        f(q, qd)
        f(qs, qds)


def _warm_mass(model) -> None:
    q, _, _ = state(model)
    model.mass_matrix(q)
    model.mass_matrix(q, include_armature=True)
    model.mass_matrix(batch(model)[0])


def _warm_coriolis(model) -> None:
    q, qd, _ = state(model)
    model.coriolis_matrix(q, qd)
    model.coriolis_matrix(*batch(model)[:2])


def _warm_forward(model) -> None:
    q, qd, tau = state(model)
    model.forward_dynamics(q, qd, tau)
    model.forward_dynamics(q, qd, tau, include_armature=True)
    model.forward_dynamics(q, qd, tau, external_wrenches={tip(model): np.ones(6)},
                           include_friction=True)
    model.forward_dynamics(*batch(model))


def _warm_energy(model) -> None:
    q, qd, _ = state(model)
    model.kinetic_energy(q, qd)
    model.potential_energy(q)
    qs, qds, _ = batch(model)
    model.kinetic_energy(qs, qds)
    model.potential_energy(qs)


def _warm_kinematics(model) -> None:
    q, qd, _ = state(model)
    link = tip(model)
    model.link_transform(q, link)
    for frame in ('world', 'link'):
        model.jacobian(q, link, frame=frame)
        model.jacobian_dot_qd(q, qd, link, frame=frame)
        model.cartesian_dynamics(q, qd, link, frame=frame)


#: How the facade reaches these entries (collected by :mod:`manip_dynamics.precompile`).
PRECOMPILE_STEPS = [
    ('inverse dynamics', _warm_inverse), ('gravity and Coriolis torques', _warm_bias),
    ('mass matrix', _warm_mass), ('Coriolis matrix', _warm_coriolis),
    ('forward dynamics', _warm_forward), ('energy', _warm_energy),
    ('Jacobians and Cartesian dynamics', _warm_kinematics)]
