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
Payload estimation from joint torques measured against the current model.

A rigid payload on a link adds ``Y_b(q, qd, qdd) pi_p`` to the joint torques, with
``pi_p`` its ten standard parameters moved into the body frame of that link (the
regressor of :mod:`.regressor`, Khalil and Dombre sec. 12.6 "identification of the
load inertial parameters").  The residual ``tau_measured - ID_model(q, qd, qdd)`` is
therefore linear in the payload's parameters expressed in the link frame:

* static poses (qd = qdd = 0): only the gravity part is excited, which determines the mass
  and the first moment ``m c`` (4 numbers) when the link takes at least two orientations
  that are not rotations about the gravity direction;
* with motion, the inertia about the link origin too (10 numbers).

The estimate is returned as ``set_payload`` takes it: mass [kg], centre of mass in the link
frame [m], inertia about the centre of mass (``ixx ixy ixz iyy iyz izz``, link axes).
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.errors import InputError
from manip_dynamics.identification.regressor import body_from_parameters
from manip_dynamics.inputs import float_array
from manip_dynamics.spatial import inertia_problem

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class PayloadEstimate:
    """
    A payload estimate in the form of ``RobotModel.set_payload``.

    ``link``; ``mass`` [kg]; ``com`` (3,) [m] in the link frame; ``inertia`` (6,) ``ixx ixy
    ixz iyy iyz izz`` about the centre of mass [kg m^2] (zeros from static data, and when
    the fitted inertia is not one a rigid body can have); ``residual_rms`` (n,) [N m] of the
    fit; ``samples``; ``with_inertia``; ``note``: why the inertia is not given, or ``''``.
    """

    link: str
    mass: float
    com: FloatArray
    inertia: FloatArray
    residual_rms: FloatArray
    samples: int
    with_inertia: bool
    note: str = ''


def _link_to_body_map(model, link: str) -> tuple[int, FloatArray]:
    """Return the body index and the (10, 10) map link-frame params -> body-frame params."""
    frame = model.link_frame(link)
    if frame.body < 0:
        raise InputError('link %r is fixed to the root: a payload there moves no joint'
                         % link)
    rot = frame.T_body_link[:3, :3]
    pos = frame.T_body_link[:3, 3]
    out = np.zeros((10, 10))
    # m and m c: m_b = m, h_b = R h + m p
    out[0, 0] = 1.0
    out[1:4, 1:4] = rot
    out[1:4, 0] = pos
    # inertia about the body origin: I_b = R I_l R^T + m (p.p 1 - p p^T)
    #   - ([p]x [R h]x + [R h]x [p]x), the parallel-axis shift of a body whose first
    #   moment about the link origin is h (the parallel-axis theorem, Craig eq. 6.25)
    basis = np.eye(10)
    for k in range(10):
        p = basis[k]
        i_l = np.array([[p[4], p[5], p[6]], [p[5], p[7], p[8]], [p[6], p[8], p[9]]])
        h = rot @ p[1:4]
        i_b = rot @ i_l @ rot.T + p[0] * (pos @ pos * np.eye(3) - np.outer(pos, pos)) \
            + (2.0 * (pos @ h) * np.eye(3) - np.outer(pos, h) - np.outer(h, pos))
        out[4:, k] = [i_b[0, 0], i_b[0, 1], i_b[0, 2], i_b[1, 1], i_b[1, 2], i_b[2, 2]]
    return frame.body, out


def _samples(value: ArrayLike, what: str, n: int) -> np.ndarray:
    """
    Return samples as a finite real (N, n) array, N >= 1, or raise InputError naming them.

    :param value: One sample (n,) or samples (N, n).
    :param what: The argument's name for the message.
    :param n: Joints of the model.
    """
    arr = float_array(value, what)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != n:
        raise InputError('%s must have shape (N, %d), got %s' % (what, n, arr.shape))
    if arr.shape[0] == 0:
        raise InputError('%s has no samples (shape %s): give at least one pose'
                         % (what, arr.shape))
    bad = ~np.isfinite(arr)
    if bad.any():
        k, j = np.argwhere(bad)[0]
        raise InputError('%s of joint %d in sample %d is %r' % (what, j, k, float(arr[k, j])))
    return arr


def estimate_payload(model, link: str, q: ArrayLike, tau: ArrayLike, *,
                     qd: ArrayLike | None = None, qdd: ArrayLike | None = None,
                     include_friction: bool = True,
                     include_armature: bool = True) -> PayloadEstimate:
    """
    Estimate a payload on ``link`` from measured torques and the model (without payload).

    Least squares on the payload's inertial parameters (Khalil and Dombre sec. 12.4): the
    measured torques minus the model's inverse dynamics, joint friction and rotor inertia
    included (what the arm's joints apply besides the payload), against the payload
    columns of the regressor. Static poses give the mass and centre of mass; moving data the
    inertia too, returned only when it is one a rigid body can have (Craig sec. 6.3:
    positive principal moments obeying the triangle inequality), else with the reason.

    :param model: The model without the payload (a payload already set on it counts as
        part of the arm).
    :param link: The link carrying the payload (any link that moves).
    :param q: Joint positions (N, n) [rad or m].
    :param tau: Measured torques (N, n) [N m or N].
    :param qd: Velocities (N, n); None for static poses (then ``qdd`` must be None too).
    :param qdd: Accelerations (N, n).
    :param include_friction: Subtract the model's joint friction (viscous + Coulomb) from
        the measurements (default: the model as loaded; it used to be left in, which
        biased the estimate from motion by the friction torques).
    :param include_armature: Subtract the model's rotor inertia ``armature * qdd``.
    :return: :class:`PayloadEstimate`.
    :raises InputError: Too few or too similar poses (mass and centre of mass not
        determined), or a non-positive estimated mass.
    """
    static = qd is None
    if static and qdd is not None:
        raise InputError('qdd is given without qd: give both for moving data, neither for '
                         'static poses')
    q = _samples(q, 'q', model.dof)
    tau = _samples(tau, 'tau', model.dof)
    qd = np.zeros_like(q) if qd is None else _samples(qd, 'qd', model.dof)
    qdd = np.zeros_like(q) if qdd is None else _samples(qdd, 'qdd', model.dof)
    for name, arr in (('tau', tau), ('qd', qd), ('qdd', qdd)):
        if arr.shape != q.shape:
            raise InputError('%s has shape %s but q has %s' % (name, arr.shape, q.shape))
    body, link_map = _link_to_body_map(model, link)
    residual = tau - model.inverse_dynamics(q, qd, qdd, include_friction=include_friction,
                                            include_armature=include_armature)
    y = model.regressor(q, qd, qdd)[..., 10 * body:10 * body + 10] @ link_map  # (N, n, 10)
    cols = 4 if static else 10
    w = y[..., :cols].reshape(-1, cols)
    b = residual.reshape(-1)
    sv = np.linalg.svd(w, compute_uv=False)
    if sv[-1] <= 1e-8 * sv[0]:
        raise InputError('the poses do not determine the payload on %r: use at least two '
                         'poses with different orientations of the link (not only rotations '
                         'about gravity)%s' % (link, '' if static else ', and move every '
                                               'joint'))
    x = np.linalg.lstsq(w, b, rcond=None)[0]
    params = np.zeros(10)
    params[:cols] = x
    if params[0] <= 0.0:
        raise InputError('estimated payload mass %.4g kg is not positive: no payload on %r, '
                         'or the model is off' % (params[0], link))
    mass, com, i_c = body_from_parameters(params)
    note = ''
    if static:
        i_c = np.zeros((3, 3))
        note = 'static poses determine the mass and the centre of mass only'
    else:
        problem = inertia_problem(i_c)
        if problem is not None:
            note = ('the fitted inertia is not one a rigid body can have (%s): not given; '
                    'move the link through more orientations, or check the model' % problem)
            i_c = np.zeros((3, 3))
    fit = (b - w @ x).reshape(q.shape)
    return PayloadEstimate(
        link=link, mass=mass, com=com,
        inertia=np.array([i_c[0, 0], i_c[0, 1], i_c[0, 2], i_c[1, 1], i_c[1, 2], i_c[2, 2]]),
        residual_rms=np.sqrt(np.mean(fit ** 2, axis=0)), samples=q.shape[0],
        with_inertia=not note, note=note)
