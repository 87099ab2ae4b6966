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
From the observer's residual to a contact decision and a wrench estimate.

* :class:`ContactDetector`: joint i is in contact once ``|r_i| > threshold_i`` and stays so
  until ``|r_i| < (1 - hysteresis) threshold_i`` (a Schmitt trigger per joint); the
  contact flag is the OR over the joints.
* :func:`estimate_wrench`: the wrench ``w`` at one link's origin whose joint torques
  ``J^T w`` best explain r, by the damped least-squares (Levenberg-Marquardt) inverse of
  ``J^T``::

      w = argmin |J^T w - r|^2 + lambda^2 |w|^2 = (J J^T + lambda^2 I_6)^-1 J r

  (Haddadin et al. 2017, sec. VI "isolation and identification").  The damping
  ``lambda`` bounds the estimate near a singularity of J and biases it by about
  ``lambda^2 / sigma_i^2`` along a direction with singular value ``sigma_i``; wrench
  components that no joint feels (``J^T w = 0``, e.g. any component when n < 6) come back
  as zero, not as what was applied.
"""

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.errors import InputError
from manip_dynamics.small_arrays import all_finite, any_true

FloatArray = NDArray[np.float64]

#: Default damping lambda of :func:`estimate_wrench` [m for the force rows, 1 for torque].
DEFAULT_WRENCH_DAMPING = 0.01

#: Oldest contact flag a controller acts on [s before its newest joint state]: the nodes'
#: ``max_contact_age`` default (feedforward_filter, trajectory_controller). Twice the
#: observer's largest lag measured behind the real controller_manager with a busy core
#: (0.25 s): a flag older than one update period still speaks of the motion it stops.
MAX_CONTACT_AGE = 0.5


def contact_is_current(stamp: float, newest: float, since: float,
                       max_age: float = MAX_CONTACT_AGE) -> bool:
    """
    Return whether a contact flag speaks of the motion a controller runs now.

    All times on the joint states' clock [s] (a flag carries the stamp of the joint state it
    was computed from). A flag counts when stamped at or after ``since`` (the motion's start,
    a resume, or the flag that stopped it) and at most ``max_age`` before the newest joint
    state. The age bound is not one update period: behind the real controller_manager with a
    busy core the observer's output trailed the joint states by up to 0.25 s, and a flag
    judged by age alone came too late to count.

    :param stamp: The flag's stamp.
    :param newest: The newest joint state's stamp.
    :param since: The earliest stamp that counts.
    :param max_age: [s].
    """
    return stamp >= since and newest - stamp <= max_age


class ContactState(NamedTuple):
    """
    One contact decision, model order.

    ``flags`` (n,) bool: per joint in contact (after hysteresis); ``ratios`` (n,):
    ``|r_i| / threshold_i``; ``strongest``: index of the joint with the largest ratio;
    ``contact``: any joint in contact.
    """

    flags: NDArray[np.bool_]
    ratios: FloatArray
    strongest: int
    contact: bool


class ContactDetector:
    """Per-joint thresholds with hysteresis on the residual (see the module docstring)."""

    def __init__(self, thresholds: ArrayLike, hysteresis: float = 0.5) -> None:
        """
        Set the thresholds; no joint is in contact at first.

        :param thresholds: Per-joint thresholds on ``|r_i|`` [N m or N], shape (n,), > 0.
        :param hysteresis: Fraction of the threshold the residual must fall below it to
            release a joint, in [0, 1): release at ``(1 - hysteresis) threshold``.
        :raises InputError: Non-positive or non-finite thresholds, hysteresis out of range.
        """
        try:
            th = np.array(thresholds, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise InputError('thresholds must be numbers, got %r' % (thresholds,)) from None
        if th.size == 0 or not np.all(np.isfinite(th)) or np.any(th <= 0.0):
            raise InputError('thresholds must be finite and > 0, got %s' % th.tolist())
        try:
            hysteresis = float(hysteresis)
        except (TypeError, ValueError):
            raise InputError('hysteresis must be a number, got %r' % (hysteresis,)) from None
        if not 0.0 <= hysteresis < 1.0:
            raise InputError('hysteresis must be in [0, 1), got %r' % hysteresis)
        self._on = th
        self._off = (1.0 - hysteresis) * th
        self._flags = np.zeros(th.size, dtype=bool)

    @property
    def thresholds(self) -> FloatArray:
        """Return the contact thresholds [N m or N], shape (n,)."""
        return self._on.copy()

    @property
    def release_thresholds(self) -> FloatArray:
        """Return the release thresholds ``(1 - hysteresis) threshold``, shape (n,)."""
        return self._off.copy()

    def retune(self, thresholds: ArrayLike, hysteresis: float) -> None:
        """
        Use new thresholds and hysteresis from the next update on, keeping the flags.

        A joint in contact stays so until its residual falls below the new release
        threshold; one out of contact is flagged when it exceeds the new threshold.

        :raises InputError: As the constructor, or a different number of joints (the old
            settings stay).
        """
        other = ContactDetector(thresholds, hysteresis)
        if other._on.size != self._on.size:
            raise InputError('thresholds must have %d values, got %d'
                             % (self._on.size, other._on.size))
        self._on, self._off = other._on, other._off

    def reset(self) -> None:
        """Clear every joint's contact flag."""
        self._flags[:] = False

    def update(self, residual: ArrayLike) -> ContactState:
        """
        Take one residual and return the contact decision.

        :param residual: r [N m or N], shape (n,), finite.
        :return: The :class:`ContactState` (arrays are copies).
        :raises InputError: Wrong shape or NaN/inf (the flags are then unchanged).
        """
        r = np.asarray(residual, dtype=np.float64).reshape(-1)
        if r.shape != self._on.shape or not all_finite(r):
            raise InputError('residual must be %d finite values, got %s' % (
                self._on.size, r.tolist()))
        size = np.abs(r)
        self._flags = np.where(self._flags, size >= self._off, size > self._on)
        ratios = size / self._on
        return ContactState(self._flags.copy(), ratios, int(np.argmax(ratios)),
                            any_true(self._flags))


def estimate_wrench(jacobian: ArrayLike, residual: ArrayLike,
                    damping: float = DEFAULT_WRENCH_DAMPING) -> FloatArray:
    """
    Return the wrench at a link origin that best explains the residual (module docstring).

    :param jacobian: The link's geometric Jacobian ``[v; w]``, shape (6, n), in the axes
        the wrench is wanted in (:meth:`RobotModel.jacobian`).
    :param residual: Estimated external joint torques r [N m or N], shape (n,).
    :param damping: lambda >= 0 [m for the force rows, 1 for the torque rows].
    :return: ``[fx, fy, fz, tx, ty, tz]`` [N, N m], shape (6,), same axes as J.
    :raises InputError: Shapes that do not match, NaN/inf, negative damping, or a
        singular ``J J^T`` with zero damping.
    """
    jac = np.asarray(jacobian, dtype=np.float64)
    r = np.asarray(residual, dtype=np.float64).reshape(-1)
    if jac.ndim != 2 or jac.shape[0] != 6 or jac.shape[1] != r.size:
        raise InputError('jacobian must be (6, %d) for %d residuals, got %s' % (
            r.size, r.size, jac.shape))
    if not (np.all(np.isfinite(jac)) and np.all(np.isfinite(r))):
        raise InputError('jacobian or residual has NaN or inf')
    if not (np.isfinite(damping) and damping >= 0.0):
        raise InputError('damping must be finite and >= 0, got %r' % (damping,))
    gram = jac @ jac.T + damping * damping * np.eye(6)
    try:
        return np.linalg.solve(gram, jac @ r)
    except np.linalg.LinAlgError:
        raise InputError('J J^T is singular and damping is 0: no unique wrench') from None


def wrench_in_axes(wrench: ArrayLike, rotation: ArrayLike) -> FloatArray:
    """
    Re-express a wrench in other axes, same reference point: ``[R^T f; R^T t]``.

    :param wrench: ``[f; t]`` [N, N m] in axes A, shape (6,).
    :param rotation: ``R_A_B``, the rotation from axes B to axes A (columns: B's axes in
        A), shape (3, 3).
    :return: The wrench in axes B, shape (6,).
    """
    w = np.asarray(wrench, dtype=np.float64).reshape(6)
    rot = np.asarray(rotation, dtype=np.float64).reshape(3, 3)
    return np.concatenate((rot.T @ w[:3], rot.T @ w[3:]))


def wrench_frames(model: Any, link: str = '', axes: str = '') -> tuple[str, str]:
    """
    Resolve where a contact wrench is estimated and in which axes it is given.

    :param model: The robot model (:class:`~manip_dynamics.RobotModel`).
    :param link: The link at whose origin the wrench acts; '' = the model's tip link.
    :param axes: The link whose axes the wrench is given in; '' = ``link``, ``world`` = the
        model's root link.
    :return: (link, axes link), both links of the model.
    :raises InputError: A link or axes link the model does not have.
    """
    link = link or model.tip_link or model.link_names[-1]
    if link not in model.link_names:
        raise InputError('wrench link %r is not a link of the model %s' % (
            link, list(model.link_names)))
    frame = model.root_link if axes == 'world' else (axes or link)
    if frame not in model.link_names:
        raise InputError("wrench axes %r are neither 'world' nor a link of the model %s" % (
            axes, list(model.link_names)))
    return link, frame


def link_wrench(model: Any, q: ArrayLike, residual: ArrayLike, link: str, axes: str,
                damping: float = DEFAULT_WRENCH_DAMPING) -> FloatArray:
    """
    Return the wrench at ``link``'s origin that explains the residual, in ``axes``' axes.

    :func:`estimate_wrench` on the link's Jacobian (root axes), re-expressed with
    :func:`wrench_in_axes` unless ``axes`` is the root link.

    :param model: The robot model (:class:`~manip_dynamics.RobotModel`).
    :param q: Joint positions [rad or m], shape (n,).
    :param residual: Estimated external joint torques r [N m or N], shape (n,).
    :param link: As :func:`wrench_frames` returns it.
    :param axes: As :func:`wrench_frames` returns it.
    :param damping: See :func:`estimate_wrench`.
    :return: ``[fx, fy, fz, tx, ty, tz]`` [N, N m], shape (6,).
    :raises InputError: As :func:`estimate_wrench`, or a bad ``q``.
    """
    wrench = estimate_wrench(model.jacobian(q, link), residual, damping)
    if axes == model.root_link:
        return wrench
    return wrench_in_axes(wrench, model.link_transform(q, axes)[:3, :3])
