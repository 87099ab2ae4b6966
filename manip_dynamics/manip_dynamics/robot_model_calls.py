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
How :class:`~manip_dynamics.RobotModel` checks its arguments and calls the kernels.

The facade (:mod:`manip_dynamics.robot_model`) is the table of contents: each of its
methods is one of the functions here, bound as a class attribute (no extra call on the
1 kHz paths). Each function takes the model first and reads its packed arrays; the maths
is in :mod:`manip_dynamics.algorithms` (Craig ch. 6, Featherstone), the identification
calls delegate to :mod:`manip_dynamics.identification`.
"""

from collections.abc import Iterable, Mapping, Sequence
import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.algorithms import kernels as _ops
from manip_dynamics.algorithms.cartesian import (
    CartesianDynamics, DIRECTION_NAMES, operational_space_terms)
from manip_dynamics.algorithms.friction import friction_torques as _friction
from manip_dynamics.algorithms.kernels import KERNELS as _K
from manip_dynamics.algorithms.packed import pack
from manip_dynamics.batching import PARALLEL_MIN_STATES, run_batched
from manip_dynamics.errors import InputError
from manip_dynamics.inputs import float_array
from manip_dynamics.model.rigid_body_tree import (
    combine_inertias, LinkFrame, singular_mass_matrix_message)
from manip_dynamics.small_arrays import all_finite
from manip_dynamics.spatial import inertia_from_urdf, inertia_problem

FloatArray = NDArray[np.float64]
Wrenches = Mapping[str, ArrayLike] | None

_FRAMES = ('world', 'link')
_NDARRAY = np.ndarray
#: The dtype the fast paths accept, compared by identity: numpy gives every native float64
#: array this object; an equal but distinct dtype (and a byte-swapped one) takes the
#: converting path.
_FLOAT64 = np.dtype(np.float64)
_STATE_ARGS = {2: ('q', 'qd'), 3: ('q', 'qd', 'qdd')}
_FD_ARGS = ('q', 'qd', 'tau')
_PATH_ARGS = ('q', "q'", "q''")
_NO_FEXT = np.zeros((0, 6))
_EYE4 = np.eye(4)
_ID = _ops.INVERSE_DYNAMICS
_MASS = _ops.MASS_MATRIX
_CORIOLIS = _ops.CORIOLIS_MATRIX
_JACOBIAN = _ops.JACOBIAN
_FD_METHODS = ('auto', 'aba', 'cholesky')
#: Forward dynamics uses the articulated-body algorithm from this many joints on, CRBA +
#: Cholesky below (crossover measured by benchmarks/forward_dynamics_methods.py).
ABA_MIN_DOF = 8


class _Arrays(NamedTuple):
    """Everything a kernel reads; swapped as one reference when a payload changes."""

    parent: NDArray[np.int64]
    kind: NDArray[np.int64]
    axis: FloatArray
    R_tree: FloatArray
    p_tree: FloatArray
    mass: FloatArray
    com: FloatArray
    inertia: FloatArray


def _wrenches_given(external_wrenches: object) -> bool:
    """
    Return whether ``external_wrenches`` holds any wrench; refuse what is not a mapping.

    :raises InputError: Not None and not a mapping of link names to 6-vectors (an array
        alone names no link).
    """
    if external_wrenches is None:
        return False
    if not isinstance(external_wrenches, Mapping):
        raise InputError('external_wrenches must map link names to 6-vectors [fx fy fz tx ty '
                         "tz], e.g. {'tool': w}; got %s" % _describe(external_wrenches))
    return len(external_wrenches) > 0


def _describe(value: object) -> str:
    """Describe an array argument for an error message: type, dtype, shape."""
    if isinstance(value, np.ndarray):
        return '%s of %s, shape %s' % (type(value).__name__, value.dtype, value.shape)
    return type(value).__name__


def vector(value: ArrayLike, length: int, what: str) -> FloatArray:
    """Return ``value`` as a finite float vector of ``length`` or raise InputError."""
    out = float_array(value, what).reshape(-1)
    if out.shape != (length,):
        raise InputError('%s must have %d values, got %d' % (what, length, out.size))
    if not np.all(np.isfinite(out)):
        raise InputError('%s has NaN or inf: %s' % (what, out))
    return out


def _joint_array(model, attr: str) -> FloatArray:
    return np.array([getattr(j, attr) for j in model._tree.joints], dtype=np.float64)


def joint_index(model, name: str) -> int:
    """
    Return the model-order index of a joint.

    :raises InputError: The joint is not an actuated joint of the model.
    """
    try:
        return model._index[name]
    except (KeyError, TypeError):
        raise InputError('unknown joint %r; the model has %s' % (
            name, list(model._joint_names))) from None


def to_model_order(model, names: Sequence[str], values: ArrayLike, *,
                   what: str = 'positions', allow_extra: bool = False) -> FloatArray:
    """
    Reorder name-keyed values into model order (what ROS messages carry).

    :param names: Joint names of ``values``; empty means already in model order.
    :param values: One value per name, or n values when ``names`` is empty.
    :param what: Label for error messages.
    :param allow_extra: Ignore names that are not model joints (joint_states).
    :return: Values in model order, shape (n,), finite.
    :raises InputError: Length mismatch, unknown/duplicate/missing joint, NaN/inf.
    """
    names = tuple(names)
    for name in names:
        if not isinstance(name, str):
            raise InputError('joint names of %s must be strings, got %r' % (what, name))
    vals = float_array(values, what).reshape(-1)
    if not names:
        if vals.shape[0] != model._n:
            raise InputError('%s has %d values but the model has %d joints %s' % (
                what, vals.shape[0], model._n, list(model._joint_names)))
        out = vals
    else:
        if len(names) != vals.shape[0]:
            raise InputError('%s has %d values for %d joint names' % (
                what, vals.shape[0], len(names)))
        # joint_states carry the same name list message after message: remember the
        # permutation of a name list that passed the checks below
        perm = model._order_cache.get((names, allow_extra))
        if perm is None:
            perm = _name_permutation(model, names, what, allow_extra)
            if len(model._order_cache) > 32:
                model._order_cache.clear()
            model._order_cache[(names, allow_extra)] = perm
        out = vals[perm]
    if not all_finite(out):
        bad = ~np.isfinite(out)
        raise InputError('%s of joint %r is %s' % (
            what, model._joint_names[int(np.argmax(bad))], float(out[np.argmax(bad)])))
    return out


def _name_permutation(model, names: tuple[str, ...], what: str,
                      allow_extra: bool) -> NDArray[np.int64]:
    """Return ``perm`` with ``values[perm]`` in model order, or raise InputError."""
    perm = np.full(model._n, -1, dtype=np.int64)
    seen = set()
    for position, name in enumerate(names):
        if name in seen:
            raise InputError('joint %r appears twice in %s' % (name, what))
        seen.add(name)
        index = model._index.get(name)
        if index is None:
            if allow_extra:
                continue
            raise InputError('unknown joint %r in %s; the model has %s' % (
                name, what, list(model._joint_names)))
        perm[index] = position
    missing = [n for n in model._joint_names if n not in seen]
    if missing:
        raise InputError('%s lack joints %s' % (what, missing))
    return perm


def set_payload(model, link: str, mass: float, com: ArrayLike = (0.0, 0.0, 0.0),
                inertia: ArrayLike = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)) -> None:
    """
    Attach or replace a rigid payload on a link; ``mass == 0`` removes it.

    :param link: Any link of the model that moves (not one fixed to the root).
    :param mass: Payload mass [kg], >= 0.
    :param com: Payload centre of mass in the link frame [m], shape (3,).
    :param inertia: ``ixx ixy ixz iyy iyz izz`` about the payload's centre of mass,
        link-frame axes [kg m^2], or a (3, 3) matrix.
    :raises InputError: Unknown or fixed link, negative mass, unphysical inertia.
    """
    frame = link_frame(model, link)
    if frame.body < 0:
        raise InputError('link %r is fixed to the root %r: a payload there moves with no '
                         'joint' % (link, model._tree.root_link))
    try:
        mass = float(mass)
    except (TypeError, ValueError):
        raise InputError('payload mass must be a number, got %r' % (mass,)) from None
    if not math.isfinite(mass) or mass < 0.0:
        raise InputError('payload mass must be finite and >= 0, got %r' % mass)
    com_v = vector(com, 3, 'payload centre of mass')
    values = float_array(inertia, 'payload inertia')
    if values.shape == (3, 3):
        i_c = values
    else:
        i_c = inertia_from_urdf(*vector(values, 6, 'payload inertia'))
    problem = inertia_problem(i_c)
    if problem is not None:
        raise InputError('payload on link %r: %s' % (link, problem))
    with model._lock:
        if mass == 0.0:
            model._payloads.pop(link, None)
        else:
            model._payloads[link] = (mass, com_v, i_c)
        model._arrays = _build_arrays(model)


def remove_payload(model, link: str) -> None:
    """Remove the payload of a link (no error when it has none, if the link exists)."""
    link_frame(model, link)
    with model._lock:
        model._payloads.pop(link, None)
        model._arrays = _build_arrays(model)


def _build_arrays(model) -> _Arrays:
    tree = model._tree
    mass = tree.inertia.mass.copy()
    com = tree.inertia.com.copy()
    inertia = tree.inertia.inertia.copy()
    for link, (m, c, i_c) in model._payloads.items():
        frame = tree.links[link]
        rot = frame.T_body_link[:3, :3]
        b = frame.body
        parts = [(mass[b], com[b], inertia[b]),
                 (m, rot @ c + frame.T_body_link[:3, 3], rot @ i_c @ rot.T)]
        mass[b], com[b], inertia[b] = combine_inertias(parts)
    # the packed copy the kernels read (swapped as one reference, like _arrays)
    model._ints, model._flat = pack(tree.parent, tree.kind, tree.axis, tree.R_tree,
                                    tree.p_tree, mass, com, inertia, model._armature)
    return _Arrays(tree.parent, tree.kind, tree.axis, tree.R_tree, tree.p_tree,
                   mass, com, inertia)


def link_frame(model, link: str) -> LinkFrame:
    """
    Return where link ``link`` sits on the moving bodies: its :class:`LinkFrame`.

    ``body`` is the index of the moving body (joint child) the link is fixed to, -1 for a
    link fixed to the root; ``T_body_link`` (4, 4) the link frame in that body's frame
    [m]. For code that works on bodies (identification's payload fit, the kernels).

    :param link: A link name of the model.
    :raises InputError: Unknown link (the message lists the model's links).
    """
    try:
        return model._tree.links[link]
    except (KeyError, TypeError):
        raise InputError('unknown link %r; the model has %s' % (
            link, list(model._tree.links))) from None


def state_batch(model, names: tuple[str, ...], *values: ArrayLike) -> tuple[list, bool]:
    """
    Check joint-space state arguments and return them as (N, n) float64 arrays.

    Each value is one state, shape (n,), or N states, shape (N, n), in model joint order
    [rad, m and their derivatives]; all the same shape. NaN and inf pass (the kernels
    check them; :func:`state_error` names them).

    :param names: The arguments' names for the messages, e.g. ``('q', 'qd', 'qdd')``.
    :param values: The arguments, as many as ``names``.
    :return: ``(arrays, single)``: each argument as (N, n) (N = 1 for a single state) and
        whether they were given as single states.
    :raises InputError: A shape that is neither, or two arguments of different shapes.
    """
    n = model._n
    out = []
    single = None
    for name, value in zip(names, values):
        a = float_array(value, name)
        if a.ndim == 1 and a.shape[0] == n:
            is_single = True
            a = a.reshape(1, n)
        elif a.ndim == 2 and a.shape[1] == n:
            is_single = False
        else:
            raise InputError('%s must have shape (%d,) or (N, %d) for joints %s, got %s'
                             % (name, n, n, list(model._joint_names), a.shape))
        if single is None:
            single = is_single
        elif single != is_single or a.shape[0] != out[0].shape[0]:
            raise InputError('%s has shape %s but %s has shape %s' % (
                name, a.shape if not is_single else (n,), names[0],
                out[0].shape if not single else (n,)))
        out.append(a)
    return out, bool(single)


def _out(model, out: object, shape: tuple) -> FloatArray:
    """Return ``out`` checked as a writable float64 array of ``shape``, or a new one."""
    if out is None:
        return np.empty(shape)
    if (type(out) is not _NDARRAY or out.dtype != _FLOAT64 or out.shape != shape
            or not out.flags.writeable or (len(shape) > 1 and not out.flags.c_contiguous)):
        raise InputError('out must be a writable, C-contiguous float64 array of shape %s, '
                         'got %s' % (shape, _describe(out)))
    return out


def _run(model, entry, head: tuple, states: list, out: FloatArray, rows: int,
         fext: FloatArray | None = None, codes: int = 0) -> int:
    """
    Run ``entry(*head, *states, [fext], out)`` on flattened states, large batches split.

    :param states: State arrays flattened to (N n,).
    :param out: The result, stacked with ``rows`` rows per state.
    :param fext: Body wrenches (0 | n | N n, 6), or None when the kernel takes none.
    :param codes: Status codes per state (default: one per state array + 1).
    """
    n = model._n
    count = out.shape[0] // rows
    tail = () if fext is None else (fext,)
    if count < PARALLEL_MIN_STATES:
        return entry(*head, *states, *tail, out)

    def run(lo: int, hi: int) -> int:
        parts = [s[lo * n:hi * n] for s in states]
        if fext is not None:
            parts.append(fext[lo * n:hi * n] if fext.shape[0] > n else fext)
        return entry(*head, *parts, out[lo * rows:hi * rows])
    return run_batched(run, count, codes or len(states) + 1)


def _raise_code(model, code: int, names: tuple[str, ...], arrays: list) -> None:
    """
    Raise the InputError that a kernel's status ``code`` describes.

    :param names: The kernel's state arguments; ``arrays`` the same, each (N, n).
    """
    raise _code_error(model, code, names, arrays)


def _code_error(model, code: int, names: tuple[str, ...], arrays: list) -> InputError:
    """Return the InputError that a kernel's status ``code`` describes (see _raise_code)."""
    if code < 0:
        return InputError(singular_mass_matrix_message(
            model._arrays.parent, model._arrays.mass, model._joint_names, -1 - code))
    k, a = divmod(code - 1, len(names) + 1)
    return state_error(model, names, arrays, k, a if a < len(names) else None)


def state_error(model, names: tuple[str, ...], arrays: list, state: int,
                argument: int | None = None) -> InputError:
    """
    Return the InputError for state ``state`` of a batch a kernel could not compute.

    :param names: The states' argument names, as for :func:`state_batch`.
    :param arrays: The arguments as :func:`state_batch` returned them, each (N, n).
    :param state: The index of the failed state in the batch.
    :param argument: The index of the argument holding a NaN or inf (the joint is named);
        None: every input was finite and the result was not, a floating-point overflow
        (the largest input is named).
    :return: The error to raise.
    """
    k = state
    where = '' if arrays[0].shape[0] == 1 else ' in state %d' % k
    if argument is not None:
        bad = int(np.argmax(~np.isfinite(arrays[argument][k])))
        return InputError('%s of joint %r is %r%s' % (
            names[argument], model._joint_names[bad], float(arrays[argument][k, bad]), where))
    # every input finite, the result not: an overflow; name the largest input
    big = [(float(np.max(np.abs(arr[k]))), i) for i, arr in enumerate(arrays)]
    value, a = max(big)
    bad = int(np.argmax(np.abs(arrays[a][k])))
    return InputError('the result is not finite (floating-point overflow)%s: %s of joint %r '
                      'is %r, too large for the dynamics' % (
                          where, names[a], model._joint_names[bad],
                          float(arrays[a][k, bad])))


def _fast_error(model, names: tuple[str, ...], *states: FloatArray, code: int = 0) -> None:
    """
    Raise the InputError of a failed single-state fast-path call.

    Runs the general path's checks on the same (n,) states: a non-finite input is
    named there; otherwise the kernel's status ``code`` (an overflow, or a mass matrix
    that is not positive definite) is decoded.
    """
    arrays = [np.asarray(s, dtype=np.float64).reshape(1, -1) for s in states]
    for a, arr in enumerate(arrays):
        if not np.all(np.isfinite(arr)):
            _raise_code(model, 1 + a, names, arrays)
    _raise_code(model, code if code < 0 else len(names) + 1, names, arrays)


def body_wrenches(model, external_wrenches: Wrenches, batch: int = 1) -> FloatArray:
    """
    Return external link wrenches as wrenches on the moving bodies, the kernels' input.

    :param external_wrenches: Link name -> ``[fx, fy, fz, tx, ty, tz]`` [N, N m] in the
        link frame about the link origin, shape (6,) or (batch, 6); None or ``{}``: none.
        A wrench on a link fixed to the root moves no joint and is left out.
    :param batch: The number of states the wrenches go with.
    :return: Wrenches on each body in its frame about its origin, shape (1, n, 6) (the
        same for every state) or (batch, n, 6); read-only (without wrenches a shared
        array of zeros).
    :raises InputError: Unknown link, wrong shape, NaN or inf.
    """
    if not _wrenches_given(external_wrenches):
        return model._no_wrench
    items = list(external_wrenches.items())
    out = None
    for link, wrench in items:
        frame = link_frame(model, link)
        w = float_array(wrench, 'wrench on link %r' % (link,))
        if w.shape == (6,):
            w = w.reshape(1, 6)
        elif not (w.ndim == 2 and w.shape[1] == 6 and w.shape[0] == batch):
            raise InputError('wrench on link %r must have shape (6,) or (%d, 6), got %s'
                             % (link, batch, w.shape))
        if not np.all(np.isfinite(w)):
            raise InputError('wrench on link %r has NaN or inf' % link)
        if frame.body < 0:
            continue  # carried by the fixed base: no joint torque
        if out is None or (out.shape[0] == 1 and w.shape[0] > 1):
            grown = np.zeros((w.shape[0], model._n, 6))
            if out is not None:
                grown[:] = out
            out = grown
        rot = frame.T_body_link[:3, :3]
        f_b = w[:, :3] @ rot.T
        n_b = w[:, 3:] @ rot.T + np.cross(frame.T_body_link[:3, 3], f_b)
        out[:, frame.body, :3] += f_b
        out[:, frame.body, 3:] += n_b
    return model._no_wrench if out is None else out


def _fext_rows(model, fext: FloatArray) -> FloatArray:
    """Return body wrenches (1|N, n, 6) as the kernels' (0 | n | N n, 6) rows."""
    if fext is model._no_wrench:
        return _NO_FEXT
    return fext.reshape(-1, 6)


def inverse_dynamics(model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, *,
                     external_wrenches: Wrenches = None, include_friction: bool = False,
                     include_armature: bool = False,
                     out: FloatArray | None = None) -> FloatArray:
    """
    Return the joint torques that produce ``qdd`` (recursive Newton-Euler).

    ``tau = M(q) qdd + C(q, qd) qd + g(q) - sum_links J_link^T w_link`` (Craig eq.
    6.45-6.53), plus ``friction_torques(qd)`` and ``armature * qdd`` when asked.
    Equals Pinocchio's ``rnea``.  Cost O(n).

    :param q: Joint positions [rad or m], shape (n,) or (N, n).
    :param qd: Joint velocities [rad/s or m/s], same shape.
    :param qdd: Joint accelerations [rad/s^2 or m/s^2], same shape.
    :param external_wrenches: Link name -> ``[fx, fy, fz, tx, ty, tz]`` [N, N m] that the
        environment applies to the link, link frame, about the link origin; (6,) or
        (N, 6) per link.
    :param include_friction: Add viscous + Coulomb friction (Craig sec. 6.11).
    :param include_armature: Add rotor inertia ``armature * qdd``.
    :param out: Optional float64 array of the result's shape to write into (no
        allocation; its content is undefined when an error is raised).
    :return: Joint torques [N m or N], shape of ``q`` (``out`` when given).
    :raises InputError: Wrong shape, NaN/inf, complex or ``np.matrix`` input, unknown
        link, or a non-finite result (overflow: the message names the largest input).
    """
    shape = model._shape
    # The fast path: native float64 arrays of shape (n,).  The bound entry point does
    # not check its arguments (it would read an int64 array's bits as floats), so the
    # dtype and shape are checked here; anything else (lists, other dtypes: an
    # AttributeError or a failed test) takes the converting path below.
    try:
        if (q.dtype is _FLOAT64 and qd.dtype is _FLOAT64 and qdd.dtype is _FLOAT64
                and q.shape == shape and qd.shape == shape and qdd.shape == shape
                and not _wrenches_given(external_wrenches)):
            res = np.empty(shape) if out is None else _out(model, out, shape)
            if _K.dynamics(_ID, model._ints, model._flat, False, model._base_acc, q, qd, qdd,
                           _NO_FEXT, res):
                _fast_error(model, _STATE_ARGS[3], q, qd, qdd)
            if include_friction or include_armature:
                _add_joint_terms(model, res, q, qd, qdd, include_friction, include_armature)
            return res
    except (AttributeError, TypeError):
        pass  # not float64 arrays: converted and checked below
    (q2, qd2, qdd2), single = state_batch(model, _STATE_ARGS[3], q, qd, qdd)
    fext = body_wrenches(model, external_wrenches, q2.shape[0])
    res = _out(model, out, q2.shape[1:] if single else q2.shape)
    code = _run(model, _K.dynamics, (_ID, model._ints, model._flat, False, model._base_acc),
                [q2.reshape(-1), qd2.reshape(-1), qdd2.reshape(-1)],
                res.reshape(-1), model._n, _fext_rows(model, fext))
    if code:
        _raise_code(model, code, _STATE_ARGS[3], [q2, qd2, qdd2])
    if include_friction or include_armature:
        _add_joint_terms(model, res, q2, qd2, qdd2, include_friction, include_armature)
    return res


def path_terms(model, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike, *,
               include_armature: bool = False) -> tuple[FloatArray, FloatArray, FloatArray]:
    """
    Return the terms ``A, B, C`` of the joint torques along a path ``q(s)``.

    Along a path with ``qd = q' sd`` and ``qdd = q' sdd + q'' sd^2``, Craig eq. 6.59
    ``tau = M(q) qdd + V(q, qd) + G(q)`` becomes ``tau = A sdd + B sd^2 + C`` with
    ``A = M q'``, ``B = M q'' + V(q, q')`` (V is quadratic in the velocity) and ``C = G``,
    plus ``armature * q'`` in A and ``armature * q''`` in B when asked; friction is not
    included (it is not quadratic in sd). One compiled pass per state
    (:data:`~manip_dynamics.algorithms.kernels.PATH_TERMS`).

    :param q: Positions on the path [rad or m], shape (n,) or (N, n).
    :param dq: ``dq/ds`` there, same shape; ``ddq`` ``d^2q/ds^2``.
    :param include_armature: Add the rotor inertias to M.
    :return: ``A, B, C`` [N m or N per unit of sdd, sd^2, 1], each of the shape of ``q``.
    :raises InputError: Wrong shape, NaN/inf, or an overflow (named).
    """
    (q2, dq2, ddq2), single = state_batch(model, _PATH_ARGS, q, dq, ddq)
    count, n = q2.shape
    res = np.empty((count, 3, n))
    code = _run(model, _K.dynamics, (_ops.PATH_TERMS, model._ints, model._flat,
                                     bool(include_armature), model._base_acc),
                [q2.reshape(-1), dq2.reshape(-1), ddq2.reshape(-1)],
                res.reshape(-1), 3 * n, _NO_FEXT)
    if code:
        _raise_code(model, code, _PATH_ARGS, [q2, dq2, ddq2])
    if single:
        return res[0, 0], res[0, 1], res[0, 2]
    return res[:, 0], res[:, 1], res[:, 2]


def _add_joint_terms(model, res: FloatArray, q: FloatArray, qd: FloatArray, qdd: FloatArray,
                     include_friction: bool, include_armature: bool) -> None:
    """
    Add friction at ``qd`` and ``armature * qdd`` to the rigid-body torques ``res`` in place.

    ``q``, ``qd``, ``qdd``: the finite states of ``res``, (n,) or (N, n). Raises the
    InputError of an overflowing sum (every input finite, the sum not), naming its state.
    """
    with np.errstate(over='ignore', invalid='ignore'):  # an overflow is checked below
        if include_friction:
            res += (_friction(qd, model._damping, model._coulomb, model._friction_velocity)
                    .reshape(res.shape))
        if include_armature:
            res += (model._armature * qdd).reshape(res.shape)
    if not all_finite(res):
        n = model._n
        k = int(np.argmax(~np.all(np.isfinite(res.reshape(-1, n)), axis=1)))
        _raise_code(model, 1 + 4 * k + 3, _STATE_ARGS[3],
                    [q.reshape(-1, n), qd.reshape(-1, n), qdd.reshape(-1, n)])


def _bias(model, q: ArrayLike, qd: ArrayLike | None, base_acc: FloatArray,
          out: FloatArray | None) -> FloatArray:
    """Return ``inverse_dynamics(q, qd, 0)`` with base acceleration ``base_acc``."""
    shape = model._shape
    zero = model._zero_n
    try:  # the fast path, as in inverse_dynamics
        if (q.dtype is _FLOAT64 and q.shape == shape
                and (qd is None or (qd.dtype is _FLOAT64 and qd.shape == shape))):
            res = np.empty(shape) if out is None else _out(model, out, shape)
            if _K.dynamics(_ID, model._ints, model._flat, False, base_acc, q,
                           zero if qd is None else qd, zero, _NO_FEXT, res):
                _fast_error(model, _STATE_ARGS[3], q, zero if qd is None else qd, zero)
            return res
    except (AttributeError, TypeError):
        pass
    if qd is None:
        (q2,), single = state_batch(model, ('q',), q)
        qd2 = np.zeros(q2.shape)
    else:
        (q2, qd2), single = state_batch(model, _STATE_ARGS[2], q, qd)
    zeros = np.zeros(q2.shape)
    res = _out(model, out, q2.shape[1:] if single else q2.shape)
    code = _run(model, _K.dynamics, (_ID, model._ints, model._flat, False, base_acc),
                [q2.reshape(-1), qd2.reshape(-1), zeros.reshape(-1)],
                res.reshape(-1), model._n, _NO_FEXT)
    if code:
        _raise_code(model, code, _STATE_ARGS[3], [q2, qd2, zeros])
    return res


def gravity_torques(model, q: ArrayLike, *, out: FloatArray | None = None) -> FloatArray:
    """
    Return the gravity torques ``g(q)`` = ``inverse_dynamics(q, 0, 0)`` (Craig G(q)).

    :param q: Joint positions [rad or m], shape (n,) or (N, n).
    :param out: Optional array of the result's shape to write into.
    :return: Torques that hold the arm still [N m or N], shape of ``q``.
    """
    return _bias(model, q, None, model._base_acc, out)


def coriolis_torques(model, q: ArrayLike, qd: ArrayLike, *,
                     out: FloatArray | None = None) -> FloatArray:
    """
    Return ``C(q, qd) qd``: Coriolis and centrifugal torques (Craig V(q, qd), eq. 6.59).

    Computed as one Newton-Euler pass with zero gravity and zero acceleration.

    :param q: Joint positions, shape (n,) or (N, n).
    :param qd: Joint velocities, same shape.
    :param out: Optional array of the result's shape to write into.
    :return: Torques [N m or N], shape of ``q``.
    """
    return _bias(model, q, qd, model._zero_3, out)


def nonlinear_effects(model, q: ArrayLike, qd: ArrayLike, *,
                      out: FloatArray | None = None) -> FloatArray:
    """
    Return ``C(q, qd) qd + g(q)`` = ``inverse_dynamics(q, qd, 0)`` (Pinocchio's nle).

    :param q: Joint positions, shape (n,) or (N, n).
    :param qd: Joint velocities, same shape.
    :param out: Optional array of the result's shape to write into.
    :return: Torques [N m or N], shape of ``q``.
    """
    return _bias(model, q, qd, model._base_acc, out)


def mass_matrix(model, q: ArrayLike, *, include_armature: bool = False,
                out: FloatArray | None = None) -> FloatArray:
    """
    Return the joint-space mass matrix M(q) (composite-rigid-body algorithm).

    Symmetric positive definite when every joint moves some inertia; equals
    Pinocchio's ``crba`` (both triangles filled).  Cost O(n d).

    :param q: Joint positions [rad or m], shape (n,) or (N, n).
    :param include_armature: Add the rotor inertias to the diagonal.
    :param out: Optional array of the result's shape to write into.
    :return: M [kg m^2, kg m, kg], shape (n, n) or (N, n, n).
    """
    n = model._n
    try:  # the fast path, as in inverse_dynamics
        if q.dtype is _FLOAT64 and q.shape == model._shape:
            res = np.empty((n, n)) if out is None else _out(model, out, (n, n))
            if _K.matrices(_MASS, model._ints, model._flat, bool(include_armature), q, q,
                           res):
                _fast_error(model, ('q',), q)
            return res
    except (AttributeError, TypeError):
        pass
    (q2,), single = state_batch(model, ('q',), q)
    res = _out(model, out, (n, n) if single else (q2.shape[0], n, n))
    flat_q = q2.reshape(-1)
    code = _run(model, _K.matrices, (_MASS, model._ints, model._flat, bool(include_armature)),
                [flat_q, flat_q], res.reshape(-1, n), n, codes=2)
    if code:
        _raise_code(model, code, ('q',), [q2])
    return res


def coriolis_matrix(model, q: ArrayLike, qd: ArrayLike, *,
                    out: FloatArray | None = None) -> FloatArray:
    """
    Return the Christoffel-consistent Coriolis matrix C(q, qd).

    ``C qd`` equals :meth:`coriolis_torques`, and ``dM/dt - 2 C`` is skew-symmetric
    (see :mod:`manip_dynamics.algorithms.coriolis`).  Equals Pinocchio's
    ``computeCoriolisMatrix``.

    :param q: Joint positions, shape (n,) or (N, n).
    :param qd: Joint velocities, same shape.
    :param out: Optional array of the result's shape to write into.
    :return: C [kg m^2/s ...], shape (n, n) or (N, n, n).
    """
    n = model._n
    try:  # the fast path, as in inverse_dynamics
        if (q.dtype is _FLOAT64 and qd.dtype is _FLOAT64 and q.shape == model._shape
                and qd.shape == model._shape):
            res = np.empty((n, n)) if out is None else _out(model, out, (n, n))
            if _K.matrices(_CORIOLIS, model._ints, model._flat, False, q, qd, res):
                _fast_error(model, _STATE_ARGS[2], q, qd)
            return res
    except (AttributeError, TypeError):
        pass
    (q2, qd2), single = state_batch(model, _STATE_ARGS[2], q, qd)
    res = _out(model, out, (n, n) if single else (q2.shape[0], n, n))
    code = _run(model, _K.matrices, (_CORIOLIS, model._ints, model._flat, False),
                [q2.reshape(-1), qd2.reshape(-1)], res.reshape(-1, n), n)
    if code:
        _raise_code(model, code, _STATE_ARGS[2], [q2, qd2])
    return res


def friction_torques(model, qd: ArrayLike) -> FloatArray:
    """
    Return viscous + Coulomb friction torques (Craig sec. 6.11) with a smooth sign.

    :param qd: Joint velocities, shape (n,) or (N, n).
    :return: ``b qd + f_c tanh(qd / friction_velocity)`` [N m or N], shape of ``qd``.
    """
    if type(qd) is _NDARRAY and qd.dtype is _FLOAT64 and qd.shape == model._shape:
        # the fast path of one finite (n,) state; anything else is checked below
        if all_finite(qd):
            out = _friction(qd, model._damping, model._coulomb, model._friction_velocity)
            if all_finite(out):
                return out
    (qd2,), single = state_batch(model, ('qd',), qd)
    if not np.all(np.isfinite(qd2)):
        _raise_code(model, 1 + 2 * int(np.argmax(~np.all(np.isfinite(qd2), axis=1))),
                    ('qd',), [qd2])
    out = _friction(qd2, model._damping, model._coulomb, model._friction_velocity)
    if not np.all(np.isfinite(out)):
        _raise_code(model, 2 + 2 * int(np.argmax(~np.all(np.isfinite(out), axis=1))),
                    ('qd',), [qd2])
    return out[0] if single else out


def forward_dynamics(model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, *,
                     external_wrenches: Wrenches = None, include_friction: bool = False,
                     include_armature: bool = False, method: str = 'auto',
                     out: FloatArray | None = None) -> FloatArray:
    """
    Return the joint accelerations caused by ``tau`` (Craig sec. 6.12).

    ``qdd = M^-1 (tau - C qd - g + sum J^T w - friction)`` with the optional terms as in
    :meth:`inverse_dynamics`, so that ``forward_dynamics(q, qd, inverse_dynamics(q, qd,
    qdd)) == qdd``.  Equals Pinocchio's ``aba``.

    :param q: Joint positions, shape (n,) or (N, n).
    :param qd: Joint velocities, same shape.
    :param tau: Applied joint torques [N m or N], same shape.
    :param external_wrenches: As in :meth:`inverse_dynamics`.
    :param include_friction: Subtract viscous + Coulomb friction from ``tau``.
    :param include_armature: Add rotor inertias to M's diagonal.
    :param method: 'aba' (articulated-body algorithm, O(n)), 'cholesky' (CRBA +
        Cholesky, O(n^3)) or 'auto': ABA from ``ABA_MIN_DOF`` joints on, the faster of
        the two measured on this library's kernels.
    :param out: Optional array of the result's shape to write into.
    :return: Joint accelerations, shape of ``q``.
    :raises InputError: Wrong shape, NaN/inf, a non-finite result, or a mass matrix
        that is not positive definite (a joint that moves no mass).
    """
    if method == 'auto':
        code_m = model._fd_method
    elif method in _FD_METHODS:
        code_m = _ops.FD_ABA if method == 'aba' else _ops.FD_CHOLESKY
    else:
        raise InputError('method must be one of %s, got %r' % (list(_FD_METHODS), method))
    shape = model._shape
    try:  # the fast path, as in inverse_dynamics
        if (q.dtype is _FLOAT64 and qd.dtype is _FLOAT64 and tau.dtype is _FLOAT64
                and q.shape == shape and qd.shape == shape and tau.shape == shape
                and not (include_friction or _wrenches_given(external_wrenches))):
            res = np.empty(shape) if out is None else _out(model, out, shape)
            code = _K.dynamics(code_m, model._ints, model._flat, bool(include_armature),
                               model._base_acc, q, qd, tau, _NO_FEXT, res)
            if code:
                _fast_error(model, _FD_ARGS, q, qd, tau, code=code)
            return res
    except (AttributeError, TypeError):
        pass
    (q2, qd2, tau2), single = state_batch(model, _FD_ARGS, q, qd, tau)
    fext = body_wrenches(model, external_wrenches, q2.shape[0])
    if include_friction:
        if not np.all(np.isfinite(qd2)):
            k = int(np.argmax(~np.all(np.isfinite(qd2), axis=1)))
            _raise_code(model, 2 + 4 * k, _FD_ARGS, [q2, qd2, tau2])
        tau2 = tau2 - _friction(qd2, model._damping, model._coulomb, model._friction_velocity)
    res = _out(model, out, q2.shape[1:] if single else q2.shape)
    code = _run(model, _K.dynamics,
                (code_m, model._ints, model._flat, bool(include_armature),
                 model._base_acc),
                [q2.reshape(-1), qd2.reshape(-1), tau2.reshape(-1)],
                res.reshape(-1), model._n, _fext_rows(model, fext))
    if code:
        _raise_code(model, code, _FD_ARGS, [q2, qd2, tau2])
    return res


def kinetic_energy(model, q: ArrayLike, qd: ArrayLike, *,
                   include_armature: bool = False) -> float | FloatArray:
    """
    Return the kinetic energy ``1/2 qd^T M(q) qd`` [J] (Craig eq. 6.69).

    :param q: Joint positions, shape (n,) or (N, n).
    :param qd: Joint velocities, same shape.
    :return: A float, or shape (N,) for a batch.
    """
    (q2, qd2), single = state_batch(model, _STATE_ARGS[2], q, qd)
    if not np.all(np.isfinite(qd2)):
        _raise_code(model, 2 + 3 * int(np.argmax(~np.all(np.isfinite(qd2), axis=1))),
                    _STATE_ARGS[2], [q2, qd2])
    m = model.mass_matrix(q2, include_armature=include_armature)
    out = 0.5 * np.einsum('ki,kij,kj->k', qd2, m, qd2)
    if not np.all(np.isfinite(out)):
        _raise_code(model, 3 + 3 * int(np.argmax(~np.isfinite(out))), _STATE_ARGS[2],
                    [q2, qd2])
    return float(out[0]) if single else out


def potential_energy(model, q: ArrayLike) -> float | FloatArray:
    """
    Return the gravitational potential energy ``-sum m_i g^T c_i`` [J] (Craig eq. 6.73).

    Zero when every centre of mass is at the root origin's height.

    :param q: Joint positions, shape (n,) or (N, n).
    :return: A float, or shape (N,) for a batch.
    """
    (q2,), single = state_batch(model, ('q',), q)
    out = np.empty((q2.shape[0], 1))
    flat_q = q2.reshape(-1)
    code = _run(model, _K.kinematics, (_ops.POTENTIAL_ENERGY, model._ints, model._flat, -1,
                                       _EYE4, False, model._gravity),
                [flat_q, flat_q], out, 1, codes=2)
    if code:
        _raise_code(model, code, ('q',), [q2])
    return float(out[0, 0]) if single else out[:, 0]


def _frame_flag(model, frame: str) -> bool:
    if frame not in _FRAMES:
        raise InputError("frame must be 'world' or 'link', got %r" % (frame,))
    return frame == 'link'


def _body_of(model, link: str) -> tuple[int, FloatArray]:
    """Return ``(body, T_body_link)`` of a link or raise InputError."""
    try:
        return model._frames[link]
    except (KeyError, TypeError):
        raise InputError('unknown link %r; the model has %s' % (
            link, list(model._tree.links))) from None


def link_transform(model, q: ArrayLike, link: str, *,
                   out: FloatArray | None = None) -> FloatArray:
    """
    Return the pose of a link: homogeneous transform root <- link, shape (4, 4).

    :param q: Joint positions, shape (n,), or (N, n) for a batch.
    :param link: Any link of the model.
    :param out: Optional array of the result's shape to write into.
    :return: Shape (4, 4), or (N, 4, 4) for a batch.
    """
    body, tbl = _body_of(model, link)
    if type(q) is _NDARRAY and q.dtype is _FLOAT64 and q.shape == model._shape:
        q2, single = q.reshape(1, -1), True
    else:
        (q2,), single = state_batch(model, ('q',), q)
    res = _out(model, out, (4, 4) if single else (q2.shape[0], 4, 4))
    flat_q = q2.reshape(-1)
    code = _run(model, _K.kinematics, (_ops.POSE, model._ints, model._flat, body, tbl, False,
                                       model._gravity),
                [flat_q, flat_q], res.reshape(-1, 4), 4, codes=2)
    if code:
        _raise_code(model, code, ('q',), [q2])
    return res


def jacobian(model, q: ArrayLike, link: str, *, frame: str = 'world',
             out: FloatArray | None = None) -> FloatArray:
    """
    Return the geometric Jacobian of a link, shape (6, n), rows ``[v; w]``.

    ``[v; w] = J qd`` is the velocity of the link origin and the link's angular
    velocity, in root axes (``frame='world'``, Pinocchio's LOCAL_WORLD_ALIGNED) or link
    axes (``frame='link'``, Pinocchio's LOCAL).  The torques that balance a wrench
    ``w`` on the link are ``J^T w``.

    :param q: Joint positions, shape (n,), or (N, n) for a batch.
    :param link: Any link of the model.
    :param frame: 'world' or 'link'.
    :param out: Optional array of the result's shape to write into.
    :return: Shape (6, n), or (N, 6, n) for a batch.
    """
    body, tbl = _body_of(model, link)
    local = _frame_flag(model, frame)
    n = model._n
    try:  # the fast path, as in inverse_dynamics
        if q.dtype is _FLOAT64 and q.shape == model._shape:
            res = np.empty((6, n)) if out is None else _out(model, out, (6, n))
            if _K.kinematics(_JACOBIAN, model._ints, model._flat, body, tbl, local,
                             model._gravity, q, q, res):
                _fast_error(model, ('q',), q)
            return res
    except (AttributeError, TypeError):
        pass
    (q2,), single = state_batch(model, ('q',), q)
    res = _out(model, out, (6, n) if single else (q2.shape[0], 6, n))
    flat_q = q2.reshape(-1)
    code = _run(model, _K.kinematics, (_JACOBIAN, model._ints, model._flat, body, tbl, local,
                                       model._gravity),
                [flat_q, flat_q], res.reshape(-1, n), 6, codes=2)
    if code:
        _raise_code(model, code, ('q',), [q2])
    return res


def jacobian_dot_qd(model, q: ArrayLike, qd: ArrayLike, link: str, *,
                    frame: str = 'world', out: FloatArray | None = None) -> FloatArray:
    """
    Return ``dJ/dt qd``: the link origin's acceleration ``[a; wdot]`` when qdd = 0.

    :param q: Joint positions, shape (n,), or (N, n) for a batch.
    :param qd: Joint velocities, same shape.
    :param link: Any link of the model.
    :param frame: Axes of the result, 'world' or 'link'.
    :param out: Optional array of the result's shape to write into.
    :return: Shape (6,) [m/s^2, rad/s^2], or (N, 6) for a batch.
    """
    body, tbl = _body_of(model, link)
    local = _frame_flag(model, frame)
    try:  # the fast path, as in inverse_dynamics
        if (q.dtype is _FLOAT64 and qd.dtype is _FLOAT64 and q.shape == model._shape
                and qd.shape == model._shape):
            res = np.empty((1, 6)) if out is None else _out(model, out, (6,)).reshape(1, 6)
            if _K.kinematics(_ops.BIAS_ACCELERATION, model._ints, model._flat, body, tbl,
                             local, model._gravity, q, qd, res):
                _fast_error(model, _STATE_ARGS[2], q, qd)
            return res[0] if out is None else out
    except (AttributeError, TypeError):
        pass
    (q2, qd2), single = state_batch(model, _STATE_ARGS[2], q, qd)
    res = _out(model, out, (6,) if single else (q2.shape[0], 6))
    code = _run(model, _K.kinematics, (_ops.BIAS_ACCELERATION, model._ints, model._flat, body,
                                       tbl, local, model._gravity),
                [q2.reshape(-1), qd2.reshape(-1)], res.reshape(-1, 6), 1)
    if code:
        _raise_code(model, code, _STATE_ARGS[2], [q2, qd2])
    return res


def cartesian_dynamics(model, q: ArrayLike, qd: ArrayLike, link: str, *,
                       frame: str = 'world',
                       directions: Iterable[str | int] | None = None,
                       singular_threshold: float = 1e-3,
                       damping: float = 1e-2) -> CartesianDynamics:
    """
    Return the Cartesian-space dynamics of a link (Craig sec. 6.10, eq. 6.91, 6.99).

    ``F = Lambda xdd + mu + p`` for the selected task directions of the link origin.
    See :mod:`manip_dynamics.algorithms.cartesian` for the formulas and the damped
    inverse used near singularities.

    :param q: Joint positions, shape (n,).
    :param qd: Joint velocities, shape (n,).
    :param link: Any link of the model.
    :param frame: 'world' (root axes) or 'link' (link axes).
    :param directions: Task rows by name (``x y z rx ry rz``) or index 0-5; default all.
    :param singular_threshold: Smallest singular value of J considered regular.
    :param damping: Damping factor used near singularities.
    :return: A :class:`CartesianDynamics`.
    :raises InputError: Unknown link, frame or direction; bad state.
    """
    for name, value in (('q', q), ('qd', qd)):
        shape = np.shape(value)
        if len(shape) != 1:
            raise InputError('cartesian_dynamics takes one state: %s must have shape '
                             '(%d,), got %s' % (name, model._n, shape))
    for name, value in (('singular_threshold', singular_threshold), ('damping', damping)):
        if (isinstance(value, bool) or not isinstance(value, (int, float, np.floating))
                or not math.isfinite(value) or value < 0.0):
            raise InputError('%s must be a finite number >= 0, got %r' % (name, value))
    if directions is None:
        rows = list(range(6))
    else:
        rows = []
        for d in directions:
            if isinstance(d, str) and d in DIRECTION_NAMES:
                idx = DIRECTION_NAMES.index(d)
            elif isinstance(d, (int, np.integer)) and not isinstance(d, bool) \
                    and 0 <= d < 6:
                idx = int(d)
            else:
                raise InputError('unknown task direction %r; use %s or 0-5' % (
                    d, list(DIRECTION_NAMES)))
            if idx in rows:
                raise InputError('task direction %r given twice' % (d,))
            rows.append(idx)
        if not rows:
            raise InputError('directions must name at least one task direction')
    jac = model.jacobian(q, link, frame=frame)[rows]
    bias = model.jacobian_dot_qd(q, qd, link, frame=frame)[rows]
    q1 = np.asarray(q, dtype=np.float64)
    qd1 = np.asarray(qd, dtype=np.float64)
    mass = model.mass_matrix(q1)
    cqd = model.coriolis_torques(q1, qd1)
    grav = model.gravity_torques(q1)
    try:
        lam, mu, p, near, smin = operational_space_terms(
            jac, mass, cqd, grav, bias, singular_threshold, damping)
    except np.linalg.LinAlgError:
        raise InputError('mass matrix is singular at this state: a joint moves no mass'
                         ) from None
    return CartesianDynamics(
        link=link, frame=frame, directions=tuple(DIRECTION_NAMES[r] for r in rows),
        jacobian=jac, mass_matrix=lam, velocity_term=mu, gravity_term=p,
        near_singular=bool(near), min_singular_value=smin)


def regressor(model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, *,
              friction: bool = False, armature: bool = False) -> FloatArray:
    """
    Return the joint-torque regressor Y, ``tau = Y pi`` (Khalil and Dombre sec. 9.3).

    See :func:`manip_dynamics.identification.regressor.regressor` for ``pi``'s order.

    :param q: Joint positions, shape (n,) or (N, n); ``qd``, ``qdd`` the same shape.
    :param friction: Add viscous, Coulomb and offset columns per joint.
    :param armature: Add a rotor-inertia column per joint.
    :return: Y, shape (n, p) or (N, n, p).
    """
    from manip_dynamics.identification.regressor import regressor
    return regressor(model, q, qd, qdd, friction=friction, armature=armature)


def inertial_parameters(model, *, friction: bool = False,
                        armature: bool = False) -> FloatArray:
    """
    Return this model's ``pi`` (payloads included): ``regressor(...) @ pi`` = ID.

    :param friction: Append ``fv, fc, offset`` per joint.
    :param armature: Append the rotor inertias.
    :return: Shape (p,).
    """
    from manip_dynamics.identification.regressor import inertial_parameters
    return inertial_parameters(model, friction=friction, armature=armature)


def base_parameters(model, *, friction: bool = False, armature: bool = False):
    """
    Return the identifiable base parameters (QR with column pivoting, Gautier 1990).

    :return: A :class:`manip_dynamics.identification.base_parameters.BaseParameters`
        (selection, map ``pi_b = K pi``, names in words).
    """
    from manip_dynamics.identification.base_parameters import base_parameters
    return base_parameters(model, friction=friction, armature=armature)
