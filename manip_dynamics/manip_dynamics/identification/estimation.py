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
Estimation: weighted least squares on the base parameters, then a physically consistent fit.

**Least squares** (Khalil and Dombre sec. 12.4; Siciliano and Khatib, *Springer Handbook of
Robotics*, ch. "Model identification", sec. on least-squares estimation): the base
regressor stacked over the samples, ``W pi_b = y``, is solved once by ordinary least
squares; the residual of each joint gives its noise level ``sigma_j``; each joint's rows are
then divided by ``sigma_j`` and the system solved again (Gautier and Khalil's weighted
least squares).  The covariance ``(W^T W)^-1`` of the weighted system gives the standard
deviation of every base parameter, scaled by ``f_kept / (2 f_c)`` when the kept samples are
denser than the filter's bandwidth ``f_c`` makes them independent; the condition number of
the weighted base regressor is reported (a few hundred: a well-excited trajectory).
A joint's rows of the samples where it moves slower than ``min_speed`` are left out of
both fits: at rest a joint's dry friction takes any torque between ``-f_c`` and ``f_c``
(static friction, set by what happened before), which no function of the state predicts,
so those rows would push the gravity parameters by up to the friction level. (On a MuJoCo
arm with twice cobot7's friction this took the identified gravity torques at a hold pose
from 0.30 N m off the engine's to 0.05; on UR5 from 0.52 to 0.02; docs/IDENTIFICATION.md.)

**Physically consistent estimate** (Wensing, Kim and Slotine, IEEE RA-L 2017; the
log-Cholesky parametrisation of Rucker and Wensing, IEEE RA-L 2022): every link's
pseudo-inertia ``J = U U^T`` with ``U`` upper triangular, ``U = e^alpha [[e^d1, s12, s13,
t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]``, which is positive definite for
every real ``theta = (alpha, d, s, t)``.  ``scipy.optimize.least_squares`` minimises the
weighted torque residual (compressed through the Cholesky factor of the normal matrix, so
that its size is the number of base parameters) plus a small Tikhonov term pulling every
log-Cholesky coordinate (and friction value) towards the URDF's.  The data fix the
identifiable combinations; the URDF fixes what the data cannot see.
"""

from collections.abc import Callable
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import InputError
from manip_dynamics.identification.base_parameters import BaseParameters
from manip_dynamics.identification.data import parallel_filter, Samples
from manip_dynamics.identification.regressor import (
    BODY_PARAMETERS, FRICTION_PARAMETERS, inertial_parameters, model_with_parameters,
    parameters_from_pseudo_inertia, pseudo_inertia)

FloatArray = NDArray[np.float64]


def _gram(w: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Return ``w^T w`` and ``w^T y`` without BLAS threads (see excitation.condition_number)."""
    return np.einsum('ki,kj->ij', w, w), np.einsum('ki,k->i', w, y)


@dataclass(frozen=True)
class LeastSquaresResult:
    """
    Base parameters estimated by weighted least squares.

    ``rows``: indices of the :class:`BaseParameters` rows estimated (offset rows left out
    unless fitted); ``names``, ``values``, ``std`` (r,) of those base parameters;
    ``condition`` of the weighted base regressor; ``sigma`` (n,) per-joint residual
    standard deviation [N m]; ``samples``: number of states used; ``min_speed``: the speed
    [rad/s or m/s] below which a joint's rows were left out.
    """

    base: BaseParameters
    rows: NDArray[np.int64]
    names: tuple[str, ...]
    values: FloatArray
    std: FloatArray
    condition: float
    sigma: FloatArray
    samples: int
    min_speed: float = 0.0

    @property
    def K(self) -> FloatArray:  # noqa: N802 - the usual name of the map
        """Return the map from standard parameters to the estimated base ones, (r, p)."""
        return self.base.K[self.rows]

    @property
    def columns(self) -> NDArray[np.int64]:
        """Return the regressor columns of the estimated base parameters."""
        return self.base.independent[self.rows]

    def predict(self, model, q: FloatArray, qd: FloatArray, qdd: FloatArray) -> FloatArray:
        """Return ``W_b pi_b`` at states (N, n): the torques the estimate predicts."""
        y = model.regressor(q, qd, qdd, friction=self.base.friction,
                            armature=self.base.armature)
        return y[..., self.columns] @ self.values


def _rows(base: BaseParameters, offset: bool) -> NDArray[np.int64]:
    if offset or not base.friction:
        return np.arange(base.count)
    keep = [k for k, name in enumerate(base.names) if not name.startswith('off')]
    return np.array(keep, dtype=np.int64)


def _moving(samples: Samples, min_speed: float) -> NDArray[np.bool_]:
    """Return (K, n): whether each joint moves at least ``min_speed`` in each sample."""
    return np.abs(samples.qd) >= min_speed


def _weighted_system(model, samples: Samples, base: BaseParameters, rows: NDArray[np.int64],
                     sigma: FloatArray | None, min_speed: float
                     ) -> tuple[FloatArray, FloatArray]:
    cols = base.independent[rows]
    if samples.full is not None:
        q, qd, qdd, tau_raw = samples.full
        y = model.regressor(q, qd, qdd, friction=base.friction, armature=base.armature)
        w = parallel_filter(samples, y[..., cols])
    else:
        y = model.regressor(samples.q, samples.qd, samples.qdd, friction=base.friction,
                            armature=base.armature)
        w = y[..., cols]          # (N, n, r)
    tau = samples.tau.copy()
    if sigma is not None:
        w = w / sigma[None, :, None]
        tau = tau / sigma[None, :]
    if min_speed > 0.0:
        moving = _moving(samples, min_speed)
        w = w * moving[..., None]
        tau = tau * moving
    return w.reshape(-1, rows.size), tau.reshape(-1)


def least_squares(model, samples: Samples, base: BaseParameters, *, offset: bool = False,
                  min_speed: float = 0.0) -> LeastSquaresResult:
    """
    Estimate the base parameters by weighted least squares (Gautier and Khalil).

    :param model: The nominal :class:`~manip_dynamics.RobotModel` (kinematics, gravity,
        friction velocity).
    :param samples: Filtered samples (:func:`manip_dynamics.identification.data.prepare`).
    :param base: Base parameters; with ``friction`` the friction columns are fitted.
    :param offset: Also fit a constant torque offset per joint.
    :param min_speed: Leave out each joint's rows of the samples where it moves slower than
        this [rad/s or m/s]; 0 keeps every row. ``manip-dynamics identify fit`` uses
        :data:`manip_dynamics.observers.momentum_observer.REST_SPEED`, the speed under
        which the observer's ``stiction`` takes a joint as at rest (see the module docstring).
    :return: :class:`LeastSquaresResult`.
    :raises InputError: The samples do not excite every base parameter (rank deficient),
        or a joint never moves as fast as ``min_speed``.
    """
    if not (min_speed >= 0.0 and math.isfinite(min_speed)):
        raise InputError('min_speed must be finite and >= 0, got %r' % (min_speed,))
    rows = _rows(base, offset)
    n = model.dof
    count = samples.q.shape[0]
    kept = (_moving(samples, min_speed).sum(axis=0) if min_speed > 0.0
            else np.full(n, count))
    if np.any(kept == 0):
        raise InputError('joint %s never moves as fast as min_speed %g: nothing to fit it '
                         'on (move it, or lower min_speed)' % (
                             model.joint_names[int(np.argmin(kept))], min_speed))
    if int(kept.sum()) <= rows.size:
        raise InputError('%d samples of %d joints cannot determine %d base parameters' % (
            count, n, rows.size))
    sigma = None
    for _ in range(2):   # ordinary, then weighted by each joint's residual level
        w, y = _weighted_system(model, samples, base, rows, sigma, min_speed)
        gram, rhs = _gram(w, y)
        eig = np.linalg.eigvalsh(gram)
        if not eig[0] > 1e-12 * eig[-1]:
            raise InputError('the trajectory does not excite every base parameter (normal '
                             'matrix condition %.3g): use a richer excitation or fewer '
                             'parameters' % (eig[-1] / max(eig[0], 1e-300)))
        values = np.linalg.solve(gram, rhs)
        residual = (y - w @ values).reshape(count, n)
        if sigma is None:
            dof = np.maximum(1.0, kept - rows.size / n)
            sigma = np.sqrt(np.sum(residual ** 2, axis=0) / dof)
            sigma = np.maximum(sigma, 1e-9 * max(float(sigma.max()), 1e-12))
    s2 = float(np.sum(residual ** 2)) / max(1, int(kept.sum()) - rows.size)
    cov = s2 * np.linalg.inv(gram)
    if samples.cutoff_hz and count > 1:
        # the filtered residual has the filter's bandwidth: samples kept faster than twice
        # the cut-off are correlated, and only about 2 f_c T of them are independent
        kept_rate = 1.0 / float(np.median(np.diff(samples.t)))
        cov *= max(1.0, kept_rate / (2.0 * samples.cutoff_hz))
    return LeastSquaresResult(
        base=base, rows=rows, names=tuple(base.names[k] for k in rows), values=values,
        std=np.sqrt(np.maximum(np.diag(cov), 0.0)), condition=math.sqrt(eig[-1] / eig[0]),
        sigma=sigma, samples=count, min_speed=float(min_speed))


# ---------------------------------------------------------------------- log-Cholesky
def log_cholesky_from_pseudo_inertia(j: FloatArray) -> FloatArray:
    """
    Return ``theta`` (10,) with ``J = U U^T`` (Rucker and Wensing 2022), J positive definite.

    ``theta = (alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3)``.
    """
    flip = np.eye(4)[::-1]
    lower = np.linalg.cholesky(flip @ j @ flip)
    u = flip @ lower @ flip             # upper triangular, u @ u.T == j
    alpha = math.log(u[3, 3])
    v = u / u[3, 3]
    return np.array([alpha, math.log(v[0, 0]), math.log(v[1, 1]), math.log(v[2, 2]),
                     v[0, 1], v[1, 2], v[0, 2], v[0, 3], v[1, 3], v[2, 3]])


def pseudo_inertia_from_log_cholesky(theta: FloatArray) -> FloatArray:
    """Return ``J = U U^T`` of a log-Cholesky vector (positive definite for any theta)."""
    a, d1, d2, d3, s12, s23, s13, t1, t2, t3 = theta
    u = math.exp(a) * np.array([[math.exp(d1), s12, s13, t1],
                                [0.0, math.exp(d2), s23, t2],
                                [0.0, 0.0, math.exp(d3), t3],
                                [0.0, 0.0, 0.0, 1.0]])
    return u @ u.T


_U_ENTRIES = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))


def log_cholesky_jacobian(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
    """
    Return the ten parameters of ``theta`` and their derivatives, (10,) and (10, 10).

    ``dJ = dU U^T + U dU^T`` with ``dU/dalpha = U``, ``dU/dd_i = e^alpha e^d_i E_ii`` and
    ``dU/ds, dU/dt = e^alpha E`` (E: the matrix unit of that entry); the map J -> pi is
    linear.
    """
    a = math.exp(theta[0])
    d = np.exp(theta[1:4])
    u = a * np.array([[d[0], theta[4], theta[6], theta[7]],
                      [0.0, d[1], theta[5], theta[8]],
                      [0.0, 0.0, d[2], theta[9]],
                      [0.0, 0.0, 0.0, 1.0]])
    j = u @ u.T
    jac = np.empty((10, 10))
    jac[:, 0] = parameters_from_pseudo_inertia(2.0 * j)
    for c, (r, k) in enumerate(_U_ENTRIES):
        du = np.zeros((4, 4))
        du[r, k] = a * (d[r] if c < 3 else 1.0)
        dj = du @ u.T
        jac[:, 1 + c] = parameters_from_pseudo_inertia(dj + dj.T)
    return parameters_from_pseudo_inertia(j), jac


@dataclass(frozen=True)
class ConsistentResult:
    """
    A physically consistent estimate of every standard parameter.

    ``params`` (p,): ``pi`` of the bodies (and friction/armature when fitted), order of
    :mod:`.regressor`; ``link_params`` (n, 10): the part of each body that is its joint's
    child link (what is written back into that link's ``<inertial>``); ``model``: a
    :class:`~manip_dynamics.RobotModel` carrying the estimate; ``base_values``: ``K pi``
    for the rows of the least-squares result; ``cost``, ``iterations``, ``message``.
    """

    params: FloatArray
    link_params: FloatArray
    model: object
    friction: bool
    armature: bool
    base_values: FloatArray
    cost: float
    iterations: int
    message: str


def physically_consistent(model, samples: Samples, ls: LeastSquaresResult, *,
                          fixed_params: FloatArray | None = None,
                          regularization: float = 1e-3,
                          progress: Callable[[int, float], object] | None = None,
                          max_evaluations: int = 200) -> ConsistentResult:
    """
    Fit every link's ten parameters (and friction, armature) with ``J > 0`` for each link.

    :param model: The nominal model: its parameters are the starting point and the
        regularisation target.
    :param samples: The samples of the least-squares fit.
    :param ls: Its result (base set, noise levels used as weights).
    :param fixed_params: (n, 10) parameters of each body that are not its child link's
        (links attached by fixed joints), kept constant; default zeros (the whole body is
        fitted as one link).
    :param regularization: Weight of the pull towards the URDF (on the log-Cholesky
        coordinates and the friction values), relative to one sample.
    :param progress: ``progress(evaluation, cost)``.
    :param max_evaluations: Cap on residual evaluations of least_squares.
    :return: :class:`ConsistentResult`.
    """
    from scipy.optimize import least_squares as solve

    base = ls.base
    n = model.dof
    nominal = inertial_parameters(model, friction=base.friction, armature=base.armature)
    fixed = np.zeros((n, BODY_PARAMETERS)) if fixed_params is None else np.asarray(
        fixed_params, dtype=np.float64).reshape(n, BODY_PARAMETERS)
    own0 = nominal[:BODY_PARAMETERS * n].reshape(n, BODY_PARAMETERS) - fixed
    # weighted, compressed data term: ||C^T K pi - C^-1 g|| (C C^T = W^T W)
    w, y = _weighted_system(model, samples, base, ls.rows, ls.sigma, ls.min_speed)
    gram, rhs = _gram(w, y)
    chol = np.linalg.cholesky(gram)
    target = np.linalg.solve(chol, rhs)
    k_map = ls.K
    # regularisation scales: mass, first moment (m 0.1 m), inertia (m 0.01 m^2) per body
    masses = np.maximum(own0[:, 0], 0.05 * max(float(np.sum(own0[:, 0])), 1e-3) / n)
    scale = np.repeat(masses, BODY_PARAMETERS) * np.tile(
        [1.0, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01], n)
    extra = nominal.shape[0] - BODY_PARAMETERS * n
    if extra:
        scale = np.concatenate([scale, np.full(extra, 0.1)])
    weight = math.sqrt(regularization * samples.q.shape[0])

    thetas = []
    for k in range(n):
        j0 = pseudo_inertia(own0[k])
        jitter = 1e-9 * max(float(np.trace(j0)), 1e-9)
        thetas.append(log_cholesky_from_pseudo_inertia(j0 + jitter * np.eye(4)))
    x0 = np.concatenate(thetas + [nominal[BODY_PARAMETERS * n:]])
    lower = np.full(x0.shape, -np.inf)
    upper = np.full(x0.shape, np.inf)
    if base.friction:
        start = BODY_PARAMETERS * n
        for k in range(n):
            for c in (0, 1):   # viscous and Coulomb are >= 0; the offset is free
                lower[start + FRICTION_PARAMETERS * k + c] = 0.0
    if base.armature:
        lower[-n:] = 0.0
    for k in range(n):      # keep exp() finite: logs within +-10 of the start
        for c in range(4):
            lower[10 * k + c] = x0[10 * k + c] - 10.0
            upper[10 * k + c] = x0[10 * k + c] + 10.0
    x0 = np.clip(x0, lower, upper)

    # r(x) = [C^T K pi(x) - C^-1 g;  w (x - x0) / s]: the data term is linear in pi, so its
    # Jacobian is C^T K dpi/dx (block diagonal dpi/dx); the pull towards the URDF acts on
    # the log-Cholesky coordinates themselves (Rucker and Wensing 2022 sec. V: a distance
    # in that space keeps a link's mass distribution from collapsing to a degenerate one,
    # which a pull on pi alone allows where the data are blind)
    a_mat = chol.T @ k_map
    body = BODY_PARAMETERS * n
    x_scale = np.concatenate([np.ones(body), scale[body:]])

    def params_of(x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        own = np.empty((n, BODY_PARAMETERS))
        dpi = np.zeros((x.size, x.size))
        for k in range(n):
            block = slice(10 * k, 10 * k + 10)
            own[k], dpi[block, block] = log_cholesky_jacobian(x[block])
        dpi[body:, body:] = np.eye(x.size - body)
        return np.concatenate([(own + fixed).reshape(-1), x[body:]]), own, dpi

    reg_jac = np.diag(weight / x_scale)

    state = {'k': 0}

    def residual(x: FloatArray) -> FloatArray:
        pi = params_of(x)[0]
        r = np.concatenate([a_mat @ pi - target, weight * (x - x0) / x_scale])
        state['k'] += 1
        if progress is not None and state['k'] % 10 == 0:
            progress(state['k'], 0.5 * float(r @ r))
        return r

    def jacobian(x: FloatArray) -> FloatArray:
        return np.vstack([a_mat @ params_of(x)[2], reg_jac])

    result = solve(residual, x0, jac=jacobian, bounds=(lower, upper), method='trf',
                   x_scale='jac', max_nfev=max_evaluations, xtol=1e-10, ftol=1e-10,
                   tr_solver='lsmr')
    pi, own, _ = params_of(result.x)
    fitted = model_with_parameters(model, pi, friction=base.friction, armature=base.armature)
    return ConsistentResult(params=pi, link_params=own, model=fitted, friction=base.friction,
                            armature=base.armature, base_values=k_map @ pi,
                            cost=float(result.cost), iterations=int(result.nfev),
                            message=str(result.message))
