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
Excitation trajectories: finite Fourier series optimised for the base regressor.

Each joint follows (Swevers, Ganseman, Tukel, De Schutter and Van Brussel, "Optimal robot
excitation and identification", IEEE Trans. Robotics and Automation 13(5), 1997, eq. 8)::

    q_i(t) = q0_i + sum_{l=1..L} a_il / (w_f l) sin(w_f l t) - b_il / (w_f l) cos(w_f l t)

with base pulsation ``w_f = 2 pi f_f``: periodic (the data can be averaged over periods),
band-limited (``L f_f`` Hz at most, which sets the filter of :mod:`.data`), and with
analytic velocities and accelerations.  Here the first harmonic's coefficients are chosen
so that ``qd(0) = sum_l a_il = 0`` and ``qdd(0) = w_f sum_l l b_il = 0``: the arm starts
(and ends every period) at rest.

The coefficients are optimised with ``scipy.optimize.minimize`` (SLSQP) for the condition
number of the base regressor stacked over one period (Swevers et al. sec. IV; Khalil and
Dombre sec. 12.4.2), subject to position limits minus a margin, velocity limits and effort
limits (nominal model with friction) times a speed scale, using bounds of the Fourier sums
that hold for every t.
"""

from collections.abc import Callable
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import InputError
from manip_dynamics.identification.base_parameters import base_parameters

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class FourierTrajectory:
    """
    A periodic excitation trajectory, n joints, L harmonics, model joint order.

    ``base_frequency`` f_f [Hz]; ``a``, ``b`` (n, L) [rad/s]; ``q0`` (n,) [rad].
    """

    base_frequency: float
    a: FloatArray
    b: FloatArray
    q0: FloatArray
    joint_names: tuple[str, ...]

    @property
    def period(self) -> float:
        """Return the period 1 / f_f [s]."""
        return 1.0 / self.base_frequency

    def evaluate(self, t: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """
        Return positions, velocities and accelerations at times ``t``.

        :param t: Times [s], shape (K,).
        :return: ``q, qd, qdd``, each (K, n).
        """
        t = np.atleast_1d(np.asarray(t, dtype=np.float64))
        w = 2.0 * math.pi * self.base_frequency
        harm = np.arange(1, self.a.shape[1] + 1)
        phase = w * np.outer(t, harm)          # (K, L)
        s, c = np.sin(phase), np.cos(phase)
        wl = w * harm
        q = self.q0 + s @ (self.a / wl).T - c @ (self.b / wl).T
        qd = c @ self.a.T + s @ self.b.T
        qdd = -s @ (self.a * wl).T + c @ (self.b * wl).T
        return q, qd, qdd

    def bounds(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """
        Return bounds valid for every t: ``|q - q0|``, ``|qd|`` and ``|qdd|``, each (n,).

        ``sum_l sqrt(a^2 + b^2) / (w l)`` and its velocity and acceleration counterparts.
        """
        w = 2.0 * math.pi * self.base_frequency
        harm = np.arange(1, self.a.shape[1] + 1)
        amp = np.hypot(self.a, self.b)
        return (amp / (w * harm)).sum(axis=1), amp.sum(axis=1), (amp * w * harm).sum(axis=1)

    def to_dict(self) -> dict:
        """Return the coefficients as plain lists (for YAML or JSON)."""
        return {'base_frequency': self.base_frequency, 'joint_names': list(self.joint_names),
                'q0': self.q0.tolist(), 'a': self.a.tolist(), 'b': self.b.tolist()}


@dataclass(frozen=True)
class ExcitationResult:
    """
    An optimised excitation: the trajectory and how it uses the limits.

    ``condition`` of the base regressor over one period (and ``initial_condition`` before
    optimisation); per-joint peak ``position_margin`` [rad] left to the limits,
    ``velocity_usage`` and ``effort_usage`` (peak / limit), ``iterations``, ``message``.
    """

    trajectory: FourierTrajectory
    condition: float
    initial_condition: float
    position_margin: FloatArray
    velocity_usage: FloatArray
    effort_usage: FloatArray
    iterations: int
    message: str


def condition_number(w: FloatArray) -> float:
    """
    Return the 2-norm condition number of a tall matrix ``w`` (m, k), m >> k.

    Computed as ``sqrt(cond(w^T w))`` with the Gram matrix formed without BLAS
    (``numpy.einsum``): a multi-threaded BLAS on a busy machine made an SVD of a
    (1400, 64) matrix a hundred times slower.  Accurate while cond(w) << 1e8.
    """
    gram = np.einsum('ki,kj->ij', w, w)
    eig = np.linalg.eigvalsh(gram)
    return float(math.sqrt(eig[-1] / eig[0])) if eig[0] > 0.0 else math.inf


def _with_rest_start(free_a: FloatArray, free_b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Add the first harmonic so that qd(0) = 0 and qdd(0) = 0."""
    harm = np.arange(2, free_a.shape[1] + 2)
    a1 = -free_a.sum(axis=1, keepdims=True)
    b1 = -(free_b * harm).sum(axis=1, keepdims=True)
    return np.hstack([a1, free_a]), np.hstack([b1, free_b])


def _limits(model, margin: float, speed_scale: float) -> tuple[FloatArray, ...]:
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -math.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, math.pi)
    lo, hi = lo + margin, hi - margin
    if np.any(hi <= lo):
        bad = int(np.argmax(hi <= lo))
        raise InputError('margin %g leaves no range for joint %r' % (
            margin, model.joint_names[bad]))
    vel = np.where(np.isfinite(model.velocity_limits), model.velocity_limits, 2.0) * speed_scale
    eff = model.effort_limits * speed_scale
    return lo, hi, vel, eff


def optimise_excitation(model, *, base_frequency: float = 0.1, harmonics: int = 5,
                        margin: float = 0.1, speed_scale: float = 0.5,
                        samples_per_period: int | None = None, max_iterations: int = 60,
                        seed: int = 0, friction: bool = True,
                        progress: Callable[[int, float], object] | None = None
                        ) -> ExcitationResult:
    """
    Optimise a Fourier excitation for the condition number of the base regressor.

    :param model: The nominal :class:`~manip_dynamics.RobotModel` (its limits, and its
        torques for the effort constraint, friction included).
    :param base_frequency: f_f [Hz]; the period is 1 / f_f.
    :param harmonics: L; the highest frequency is L f_f.
    :param margin: Distance kept from each position limit [rad or m].
    :param speed_scale: Fraction of the velocity and effort limits allowed (0, 1].
    :param samples_per_period: Regressor samples per period (default 40 L).
    :param max_iterations: SLSQP iterations.
    :param seed: Seed of the random initial coefficients.
    :param friction: Include the friction columns in the regressor being conditioned.
    :param progress: ``progress(iteration, condition)`` after each iteration.
    :return: :class:`ExcitationResult`.
    :raises InputError: Bad frequency, harmonics, margin or scale.
    """
    from scipy.optimize import minimize

    if not (base_frequency > 0.0 and math.isfinite(base_frequency)):
        raise InputError('base_frequency must be > 0 Hz, got %r' % base_frequency)
    if harmonics < 2:
        raise InputError('harmonics must be >= 2 (one is used to start at rest), got %r'
                         % harmonics)
    if not 0.0 < speed_scale <= 1.0:
        raise InputError('speed_scale must be in (0, 1], got %r' % speed_scale)
    n = model.dof
    lo, hi, vel, eff = _limits(model, margin, speed_scale)
    base = base_parameters(model, friction=friction)
    count = samples_per_period or 40 * harmonics
    t = np.arange(count) / (count * base_frequency)
    free = harmonics - 1
    rng = np.random.default_rng(seed)
    names = tuple(model.joint_names)

    def unpack(x: FloatArray) -> FourierTrajectory:
        q0 = x[:n]
        fa = x[n:n + n * free].reshape(n, free)
        fb = x[n + n * free:].reshape(n, free)
        a, b = _with_rest_start(fa, fb)
        return FourierTrajectory(base_frequency, a, b, q0, names)

    def condition(x: FloatArray) -> float:
        traj = unpack(x)
        q, qd, qdd = traj.evaluate(t)
        y = base.base_regressor(model.regressor(q, qd, qdd, friction=friction))
        return condition_number(y.reshape(-1, base.count))

    def objective(x: FloatArray) -> float:
        return math.log(condition(x))

    def constraints(x: FloatArray) -> FloatArray:
        traj = unpack(x)
        dq, dqd, _ = traj.bounds()
        q, qd, qdd = traj.evaluate(t)
        tau = model.inverse_dynamics(q, qd, qdd, include_friction=True)
        peak = np.max(np.abs(tau), axis=0)
        return np.concatenate([(hi - (traj.q0 + dq)), (traj.q0 - dq) - lo, (vel - dqd) / vel,
                               np.where(np.isfinite(eff), 1.0 - peak / eff, 1.0)])

    # initial guess: the middle of the range, small random coefficients scaled to fit
    x0 = np.concatenate([0.5 * (lo + hi), rng.normal(size=2 * n * free)])
    traj0 = unpack(x0)
    dq, dqd, _ = traj0.bounds()
    shrink = 0.5 * np.minimum(0.5 * (hi - lo) / dq, vel / dqd)
    x0[n:n + n * free] *= np.repeat(shrink, free)
    x0[n + n * free:] *= np.repeat(shrink, free)
    for _ in range(20):     # efforts too: shrink until feasible
        if np.all(constraints(x0) >= 0.0):
            break
        x0[n:] *= 0.8
    initial = condition(x0)
    state = {'k': 0}

    def callback(x: FloatArray) -> None:
        state['k'] += 1
        if progress is not None:
            progress(state['k'], condition(x))

    result = minimize(objective, x0, method='SLSQP',
                      constraints=[{'type': 'ineq', 'fun': constraints}],
                      options={'maxiter': max_iterations, 'ftol': 1e-4},
                      callback=callback)
    x = result.x.copy()
    for _ in range(30):     # SLSQP may end slightly outside: shrink the motion back in
        if np.all(constraints(x) >= 0.0):
            break
        x[n:] *= 0.97
    else:
        x = x0
    traj = unpack(x)
    dq, dqd, _ = traj.bounds()
    q, qd, qdd = traj.evaluate(t)
    tau = model.inverse_dynamics(q, qd, qdd, include_friction=True)
    margin_left = np.minimum(hi + margin - np.max(q, axis=0), np.min(q, axis=0) - lo + margin)
    return ExcitationResult(
        trajectory=traj, condition=condition(x), initial_condition=initial,
        position_margin=margin_left,
        velocity_usage=np.max(np.abs(qd), axis=0) / (vel / speed_scale),
        effort_usage=np.max(np.abs(tau), axis=0) / (eff / speed_scale),
        iterations=int(result.get('nit', state['k'])), message=str(result.message))


def sample_trajectory(traj: FourierTrajectory, *, periods: int = 1, rate: float = 100.0,
                      approach_time: float = 0.0) -> tuple[FloatArray, ...]:
    """
    Return ``t, q, qd, qdd`` sampled at ``rate`` Hz over ``periods`` periods.

    With ``approach_time`` > 0 a first sample at rest at ``q(0)`` is put at that time and
    the whole motion is delayed by it (the controller interpolates from wherever the arm
    is to the start).
    """
    count = int(round(periods * traj.period * rate))
    t = np.arange(count + 1) / rate
    q, qd, qdd = traj.evaluate(t)
    return t + approach_time, q, qd, qdd


def _duration(seconds: float) -> dict:
    sec, nanosec = divmod(int(round(seconds * 1e9)), 1_000_000_000)
    return {'sec': sec, 'nanosec': nanosec}


def trajectory_yaml(traj: FourierTrajectory, *, periods: int = 3, rate: float = 50.0,
                    approach_time: float = 5.0) -> str:
    """
    Return a ``trajectory_msgs/msg/JointTrajectory`` as YAML (message fields).

    Played by ``manip-dynamics identify play excite.yaml`` (too large for ``ros2 topic
    pub``'s command line) or used as the trajectory of a FollowJointTrajectory goal.  The
    first point is ``q(0)`` at rest at ``approach_time``
    (the controller moves there from the current pose), then ``periods`` periods sampled
    at ``rate`` Hz with positions, velocities and accelerations.
    """
    import yaml

    t, q, qd, qdd = sample_trajectory(traj, periods=periods, rate=rate,
                                      approach_time=approach_time)
    points = [{'positions': [float(v) for v in q[k]],
               'velocities': [float(v) for v in qd[k]],
               'accelerations': [float(v) for v in qdd[k]],
               'effort': [],
               'time_from_start': _duration(float(t[k]))} for k in range(t.shape[0])]
    doc = {'header': {'stamp': {'sec': 0, 'nanosec': 0}, 'frame_id': ''},
           'joint_names': list(traj.joint_names), 'points': points}
    coefficients = yaml.safe_dump(traj.to_dict(), default_flow_style=True,
                                  width=10 ** 9).strip()
    head = ('# Excitation trajectory (finite Fourier series, Swevers et al. 1997): '
            'f_f = %g Hz, %d harmonics, %d periods of %g s, first point after %g s.\n')
    comment = head % (traj.base_frequency, traj.a.shape[1], periods, traj.period,
                      approach_time) + '# coefficients: %s\n' % coefficients
    return comment + yaml.safe_dump(doc, default_flow_style=None, sort_keys=False,
                                    width=120)


def read_trajectory_yaml(text: str) -> FourierTrajectory:
    """Return the Fourier coefficients stored in the comment of :func:`trajectory_yaml`."""
    import yaml

    for line in text.splitlines():
        if line.startswith('# coefficients: '):
            doc = yaml.safe_load(line[len('# coefficients: '):])
            return FourierTrajectory(float(doc['base_frequency']), np.array(doc['a']),
                                     np.array(doc['b']), np.array(doc['q0']),
                                     tuple(doc['joint_names']))
    raise InputError('no "# coefficients:" line: not an excitation file of manip-dynamics')


def write_trajectory_csv(path: str, traj: FourierTrajectory, *, periods: int = 3,
                         rate: float = 100.0) -> None:
    """Write ``t, q_*, qd_*, qdd_*`` of the trajectory as CSV."""
    t, q, qd, qdd = sample_trajectory(traj, periods=periods, rate=rate)
    names = traj.joint_names
    header = (['t'] + ['q_' + j for j in names] + ['qd_' + j for j in names]
              + ['qdd_' + j for j in names])
    data = np.column_stack([t, q, qd, qdd])
    np.savetxt(path, data, delimiter=',', header=','.join(header), comments='', fmt='%.10g')
