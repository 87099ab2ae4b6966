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
Dynamic simulation of a manipulator (Craig sec. 6.12): :class:`Simulator`, :func:`simulate`.

Integrates ``qdd = M^-1 (tau - V - G - F + tau_lim)`` (Craig eq. 6.115) forward from an
initial state (Craig eq. 6.116).  Friction ``F`` is the model's viscous + Coulomb friction
(Craig sec. 6.11, :meth:`RobotModel.friction_torques`); ``tau_lim`` the joint-limit contact
of :mod:`.joint_limits`.  The energy reported is the rigid-body energy
``kinetic + potential`` (Craig eq. 6.69-6.74); it leaves out the energy stored in a limit
spring.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import math
import threading

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.algorithms.warm_states import state
from manip_dynamics.errors import InputError
from manip_dynamics.inputs import float_array
from manip_dynamics.model.rigid_body_tree import massless_joints_reason
from manip_dynamics.safety.ranges import check_range, Range
from manip_dynamics.simulation import integrators as _k
from manip_dynamics.simulation.joint_limits import (
    contact_omega, limit_gains, LIMIT_MODES, MODE_CODES)

FloatArray = NDArray[np.float64]
Controller = Callable[[float, FloatArray, FloatArray], ArrayLike]

#: Integrator names: two fixed-step ones (usable by :class:`Simulator`) and 'adaptive'.
INTEGRATORS = ('semi_implicit_euler', 'rk4', 'adaptive')
FIXED_STEP_INTEGRATORS = ('semi_implicit_euler', 'rk4')
ADAPTIVE_METHODS = ('RK45', 'DOP853')
_METHOD_CODES = {'semi_implicit_euler': _k.SEMI_IMPLICIT_EULER, 'rk4': _k.RK4}
_K = _k.KERNELS
_NDARRAY = np.ndarray
_FLOAT64 = np.dtype(np.float64)


def _check_choice(value: str, choices: tuple[str, ...], what: str) -> str:
    if value not in choices:
        raise InputError('%s must be one of %s, got %r' % (what, list(choices), value))
    return value


def _positive(value: float, what: str) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError('%s must be a number, got %r' % (what, value)) from None
    if not (math.isfinite(out) and out > 0.0):
        raise InputError('%s must be finite and > 0, got %r' % (what, value))
    return out


#: Valid fixed steps [s]: a longer step than 0.1 s integrates no arm's dynamics usefully
#: (a 1e6 s step was accepted and returned nonsense).
DT_RANGE = Range(0.0, 0.1, low_open=True)


def _step(value: float) -> float:
    """Return a checked fixed step [s] (:data:`DT_RANGE`)."""
    return check_range('dt', value, DT_RANGE, 's')


def _count(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError('%s must be an integer >= 1, got %r' % (what, value))
    return int(value)


def _massless_message(model, code: int) -> str:
    """
    Return why M(q) is singular when joints of ``model`` move no mass, else ''.

    :param code: The integrator's status; only NOT_POSITIVE_DEFINITE is explained.
    """
    if code != _k.NOT_POSITIVE_DEFINITE:
        return ''
    reason = massless_joints_reason(model.tree.parent, model.body_inertia.mass,
                                    model.joint_names)   # payloads included
    return 'the mass matrix is singular: ' + reason if reason else ''


class Simulator:
    """
    Fixed-step simulator of one manipulator, stepped by the caller (e.g. a 1 kHz node).

    The commanded torque is held over each step (zero-order hold), clamped to the URDF
    effort limits when ``clamp_effort``.  Integrators ('semi_implicit_euler', 'rk4') and
    the limit models are described in :mod:`manip_dynamics.simulation.integrators` and
    :mod:`manip_dynamics.simulation.joint_limits`.  One :meth:`step` is one compiled-kernel
    call; a payload set on the model takes effect at the next step.  Methods are
    serialised by a lock, so a node may step on one thread and read the state on another.

    Example::

        sim = Simulator(model, q0, dt=1e-3)
        sim.step(model.gravity_torques(sim.q))
        sim.q, sim.qd, sim.t, sim.total_energy()
    """

    def __init__(self, model, q0: ArrayLike, qd0: ArrayLike | None = None, *,
                 dt: float = 1e-3, integrator: str = 'semi_implicit_euler',
                 include_friction: bool = True, include_armature: bool = True,
                 limits: str = 'spring', clamp_effort: bool = True,
                 limit_stiffness: ArrayLike | float | None = None,
                 limit_damping: ArrayLike | float | None = None) -> None:
        """
        Set up a simulation at t = 0.

        :param model: The :class:`~manip_dynamics.RobotModel` to simulate.
        :param q0: Initial joint positions [rad or m], shape (n,).
        :param qd0: Initial joint velocities [rad/s or m/s], shape (n,); default zeros.
        :param dt: Fixed step [s], in (0, 0.1].
        :param integrator: 'semi_implicit_euler' or 'rk4' ('adaptive' is only available
            through :func:`simulate`).
        :param include_friction: Apply the model's viscous + Coulomb joint friction.
        :param include_armature: Add the model's rotor inertias (joint_dynamics armature,
            zero unless set) to M's diagonal; default True, as the controllers and the
            observer do: one model of the rotor inertia everywhere.
        :param limits: 'spring', 'hard' or 'none' (see :mod:`.joint_limits`).
        :param clamp_effort: Clamp commanded torques to ``model.effort_limits``.
        :param limit_stiffness: 'spring' stiffness [N m/rad or N/m], scalar or (n,);
            default ``m_eff (2 pi / 5 ms)^2`` per joint.
        :param limit_damping: 'spring' damping [N m s/rad or N s/m], scalar or (n,);
            default critical, ``2 sqrt(k m_eff)``.
        :raises InputError: Bad state, step, integrator or limit mode.
        """
        self._model = model
        n = model.dof
        self._n = n
        self._dt = _step(dt)
        if integrator == 'adaptive':
            raise InputError("integrator 'adaptive' has no fixed step: use simulate(..., "
                             "integrator='adaptive'), or 'semi_implicit_euler' or 'rk4' here")
        self._integrator = _check_choice(integrator, FIXED_STEP_INTEGRATORS, 'integrator')
        self._method = _METHOD_CODES[integrator]
        self._limits = _check_choice(limits, LIMIT_MODES, 'limits')
        self._include_friction = bool(include_friction)
        self._include_armature = bool(include_armature)
        self._clamp = bool(clamp_effort)
        self._effort = np.ascontiguousarray(model.effort_limits, dtype=np.float64)
        # everything the step kernel reads besides the model and the state, in one array
        self._params = _k.pack_parameters(
            n, dt=self._dt, method=self._method, base_acc=-model.gravity,
            friction=self._include_friction, damping=model.damping,
            coulomb=model.coulomb_friction, friction_velocity=model.friction_velocity,
            armature=self._include_armature, mode=MODE_CODES[limits],
            omega=contact_omega(integrator, self._dt), lower=model.position_lower,
            upper=model.position_upper,
            k_user=limit_gains(limit_stiffness, n, 'limit_stiffness'),
            c_user=limit_gains(limit_damping, n, 'limit_damping'), clamp=self._clamp,
            effort=self._effort)
        self._shape = (n,)
        # body-frame external wrenches (n, 6) read by every accelerations() call
        self._fext = np.zeros((n, 6))
        self._info = np.zeros(1, dtype=np.int64)
        self._applied = np.zeros(n)
        self._lock = threading.Lock()
        self._q0 = self._state(q0, 'q0')
        self._qd0 = np.zeros(n) if qd0 is None else self._state(qd0, 'qd0')
        self._q = self._q0.copy()
        self._qd = self._qd0.copy()
        self._steps = 0

    # ------------------------------------------------------------------ helpers
    def _state(self, value: ArrayLike, what: str) -> FloatArray:
        return self._model.to_model_order((), value, what=what).copy()

    def _torque(self, tau: ArrayLike, what: str = 'tau') -> FloatArray:
        """Return a commanded torque as a contiguous float64 (n,) array (not yet checked)."""
        if not (type(tau) is _NDARRAY and tau.dtype == _FLOAT64 and tau.shape == self._shape
                and tau.flags.c_contiguous):
            tau = float_array(tau, what)
            if tau.shape != self._shape:
                raise InputError('%s must have shape (%d,) for joints %s, got %s' % (
                    what, self._n, list(self._model.joint_names), tau.shape))
        return tau

    def _bad_torque(self, tau: FloatArray, what: str) -> InputError:
        bad = int(np.argmax(~np.isfinite(tau)))
        return InputError('%s of joint %r is %r' % (
            what, self._model.joint_names[bad], float(tau[bad])))

    def _applied_torque(self, tau: ArrayLike, out: FloatArray, what: str = 'tau') -> None:
        """Validate a commanded torque and write it, clamped if asked, into ``out``."""
        tau = self._torque(tau, what)
        if not np.all(np.isfinite(tau)):
            raise self._bad_torque(tau, what)
        if self._clamp:
            np.clip(tau, -self._effort, self._effort, out=out)
        else:
            out[:] = tau

    def _advance(self, tau: FloatArray, steps: int, what: str = 'tau') -> None:
        """Clamp ``tau`` into the applied torque and run ``steps`` steps (lock held)."""
        model = self._model  # its packed arrays are swapped atomically by set_payload
        ints, flat = model.packed
        code = _K.advance(ints, flat, self._params, steps, self._q, self._qd,
                          tau, self._applied, self._fext, self._info)
        if code == _k.BAD_TORQUE:
            raise self._bad_torque(tau, what)
        self._steps += int(self._info[0])
        if code != _k.OK:
            t = self._steps * self._dt
            massless = _massless_message(model, code)
            if massless:
                raise InputError('simulation failed at t = %.6g s: %s; state kept at the last '
                                 'good step' % (t, massless))
            why = ('the mass matrix is not positive definite' if
                   code == _k.NOT_POSITIVE_DEFINITE else 'the state became NaN/inf')
            raise InputError(
                'simulation failed at t = %.6g s: %s; the integration diverged (reduce dt '
                '= %g s, use semi_implicit_euler, or check the torques); state kept at the '
                'last good step' % (t, why, self._dt))

    # ------------------------------------------------------------------ public API
    def step(self, tau: ArrayLike, steps: int = 1) -> None:
        """
        Advance the simulation by ``steps * dt`` with a constant commanded torque.

        :param tau: Commanded joint torques [N m or N], shape (n,), model order; clamped to
            ``model.effort_limits`` when ``clamp_effort`` (see :attr:`applied_effort`).
        :param steps: Number of fixed steps.
        :raises InputError: Wrong length or NaN/inf in ``tau``, bad ``steps``, or a
            diverged integration (the state stays at the last good step).
        """
        if steps != 1:
            steps = _count(steps, 'steps')
        tau = self._torque(tau)
        with self._lock:
            self._advance(tau, steps)  # one compiled call: clamp, then every step

    @property
    def model(self):
        """Return the simulated :class:`~manip_dynamics.RobotModel`."""
        return self._model

    @property
    def dt(self) -> float:
        """Return the fixed step [s]."""
        return self._dt

    @property
    def integrator(self) -> str:
        """Return the integrator name."""
        return self._integrator

    @property
    def limits(self) -> str:
        """Return the joint-limit mode: 'spring', 'hard' or 'none'."""
        return self._limits

    @property
    def clamp_effort(self) -> bool:
        """Return whether commanded torques are clamped to ``model.effort_limits``."""
        return self._clamp

    @property
    def t(self) -> float:
        """Return the simulated time [s] (step count times dt, no round-off drift)."""
        return self._steps * self._dt

    @property
    def q(self) -> FloatArray:
        """Return a copy of the joint positions [rad or m], shape (n,)."""
        with self._lock:
            return self._q.copy()

    @property
    def qd(self) -> FloatArray:
        """Return a copy of the joint velocities [rad/s or m/s], shape (n,)."""
        with self._lock:
            return self._qd.copy()

    @property
    def applied_effort(self) -> FloatArray:
        """Return the torque applied in the last step [N m or N], (n,) (after clamping)."""
        with self._lock:
            return self._applied.copy()

    @property
    def joint_effort(self) -> FloatArray:
        """Return the effort a joint state reports [N m or N], (n,): :attr:`applied_effort`."""
        return self.applied_effort

    def state(self) -> tuple[float, FloatArray, FloatArray]:
        """Return ``(t, q, qd)`` read consistently under the lock."""
        with self._lock:
            return self._steps * self._dt, self._q.copy(), self._qd.copy()

    def kinetic_energy(self) -> float:
        """Return ``1/2 qd^T M(q) qd`` [J] (Craig eq. 6.69; with armature if enabled)."""
        t, q, qd = self.state()
        return float(self._model.kinetic_energy(q, qd,
                                                include_armature=self._include_armature))

    def potential_energy(self) -> float:
        """Return the gravitational potential energy ``-sum m g^T c`` [J] (Craig eq. 6.73)."""
        return float(self._model.potential_energy(self.q))

    def total_energy(self) -> float:
        """Return kinetic + potential energy [J] (limit-spring energy not included)."""
        t, q, qd = self.state()
        return float(self._model.kinetic_energy(q, qd, include_armature=self._include_armature)
                     + self._model.potential_energy(q))

    def reset(self, q0: ArrayLike | None = None, qd0: ArrayLike | None = None) -> None:
        """
        Go back to t = 0, at the initial state or the given one.

        :param q0: New joint positions (n,); default: the constructor's ``q0``.
        :param qd0: New joint velocities (n,); default: the constructor's ``qd0``.
        :raises InputError: Bad state.
        """
        q = self._q0 if q0 is None else self._state(q0, 'q0')
        qd = self._qd0 if qd0 is None else self._state(qd0, 'qd0')
        with self._lock:
            self._q[:] = q
            self._qd[:] = qd
            self._applied[:] = 0.0
            self._fext[:] = 0.0
            self._steps = 0

    def warm_up(self) -> None:
        """
        Compile the step kernel for these settings, then go back to t = 0 at the same state.

        One step with zero torque and the energies, undone: the first step compiles (seconds
        without a disk cache), so a real-time loop calls this on its fresh simulator before
        its clock starts (the external wrenches are cleared, as by :meth:`reset`).
        """
        q, qd = self.q, self.qd
        self.step(np.zeros(self._n))
        self.total_energy()
        self.reset(q, qd)

    def hold(self, steps: int = 0) -> None:
        """
        Brake the arm where it is: velocities zero, no torque applied, time goes on.

        What a driver's brakes do (a protective stop, or the brakes before the first
        command); the pose and the external wrenches are kept.

        :param steps: Steps of simulated time that pass with the arm held (>= 0).
        :raises InputError: A negative or non-integer ``steps``.
        """
        if steps != 0:
            steps = _count(steps, 'steps')
        with self._lock:
            self._qd[:] = 0.0
            self._applied[:] = 0.0
            self._steps += steps

    @property
    def steps(self) -> int:
        """Return the steps taken since the start or the last :meth:`reset` (t = steps dt)."""
        return self._steps

    # ------------------------------------------------------------------ external wrenches
    # (pushes on the simulated arm; kept apart from the stepping code above)
    def set_external_wrenches(self, external_wrenches: Mapping[str, ArrayLike] | None) -> None:
        """
        Set the wrenches the environment applies to links from the next step on.

        They enter the equations of motion exactly as ``external_wrenches`` enter
        :meth:`RobotModel.forward_dynamics`: ``qdd = M^-1 (tau - V - G - F + tau_lim + sum
        J^T w)``, with each wrench fixed in its link's frame (a follower load) and held
        until the next call; every integrator stage sees it.  ``None`` or ``{}`` removes
        them, and so does :meth:`reset`.  :attr:`applied_effort` stays the motor torque.

        :param external_wrenches: Link name -> ``[fx, fy, fz, tx, ty, tz]`` [N, N m] in the
            link frame, about the link origin, shape (6,) each.
        :raises InputError: Unknown link, wrong shape, NaN/inf (nothing changes then).
        """
        body = self._model.body_wrenches(external_wrenches or None)[0]
        with self._lock:
            self._fext[:] = body

    @property
    def external_wrenches_active(self) -> bool:
        """Return whether a non-zero external wrench acts on the arm."""
        with self._lock:
            return bool(np.any(self._fext != 0.0))


@dataclass(frozen=True)
class SimulationResult:
    """
    A recorded simulation run; K samples, n joints, model order.

    ``t`` (K,) [s]; ``q``, ``qd`` (K, n); ``tau`` (K, n) the torque applied from each
    sample on (commanded, clamped to the effort limits when asked); ``kinetic``,
    ``potential``, ``energy`` (K,) [J], ``energy = kinetic + potential``.
    """

    t: FloatArray
    q: FloatArray
    qd: FloatArray
    tau: FloatArray
    kinetic: FloatArray
    potential: FloatArray
    energy: FloatArray
    joint_names: tuple[str, ...]
    integrator: str
    dt: float


def _record_steps(n_steps: int, record_every: int) -> list[int]:
    idx = list(range(0, n_steps + 1, record_every))
    if idx[-1] != n_steps:
        idx.append(n_steps)
    return idx


class _Progress:
    """Call ``progress(fraction)`` at most about 200 times per run."""

    def __init__(self, callback: Callable[[float], object] | None) -> None:
        self._cb = callback
        self._last = -1.0

    def __call__(self, fraction: float) -> None:
        if self._cb is not None and (fraction - self._last >= 0.005 or fraction >= 1.0):
            self._last = fraction
            self._cb(min(1.0, fraction))


def simulate(model, q0: ArrayLike, qd0: ArrayLike | None = None, *, duration: float,
             dt: float = 1e-3, integrator: str = 'semi_implicit_euler',
             controller: Controller | None = None, include_friction: bool = True,
             include_armature: bool = True, limits: str = 'spring',
             clamp_effort: bool = True, record_every: int = 1, rtol: float = 1e-8,
             atol: float = 1e-10, adaptive_method: str = 'DOP853',
             limit_stiffness: ArrayLike | float | None = None,
             limit_damping: ArrayLike | float | None = None,
             progress: Callable[[float], object] | None = None) -> SimulationResult:
    """
    Simulate the manipulator from ``(q0, qd0)`` for ``duration`` seconds (Craig sec. 6.12).

    The run has ``round(duration / dt)`` steps of ``dt``; every ``record_every``-th step
    (and the last) is recorded.  With a fixed-step integrator the controller is called once
    per step at the step's start and its torque held over the step; with 'adaptive'
    (``scipy.integrate.solve_ivp`` with ``adaptive_method`` and ``rtol``/``atol``) it is
    called at every right-hand-side evaluation and the solution is sampled on the record
    grid.  'adaptive' supports limits 'spring' and 'none' only (a hard stop is a
    discontinuity in the state).

    :param model: The :class:`~manip_dynamics.RobotModel`.
    :param q0: Initial joint positions, shape (n,).
    :param qd0: Initial joint velocities, shape (n,); default zeros.
    :param duration: Simulated time [s], > 0.
    :param dt: Fixed step, and the record grid spacing unit for 'adaptive' [s], in (0, 0.1].
    :param integrator: 'semi_implicit_euler', 'rk4' or 'adaptive'.
    :param controller: ``controller(t, q, qd) -> tau`` (n,) [N m]; None applies zero torque.
    :param include_friction: Apply joint friction.
    :param include_armature: Add rotor inertias to M (default True, as :class:`Simulator`).
    :param limits: 'spring', 'hard' or 'none'.
    :param clamp_effort: Clamp the controller's torques to the effort limits.
    :param record_every: Record every k-th step.
    :param rtol: Relative tolerance of 'adaptive'.
    :param atol: Absolute tolerance of 'adaptive'.
    :param adaptive_method: 'DOP853' (default) or 'RK45' for 'adaptive'.
    :param limit_stiffness: As in :class:`Simulator`.
    :param limit_damping: As in :class:`Simulator`.
    :param progress: ``progress(fraction)`` called as the run advances (0 to 1).
    :return: A :class:`SimulationResult`.
    :raises InputError: Bad argument, bad controller output (named with its time), or a
        diverged integration.
    """
    duration = _positive(duration, 'duration')
    dt = _step(dt)
    record_every = _count(record_every, 'record_every')
    _check_choice(integrator, INTEGRATORS, 'integrator')
    n_steps = int(round(duration / dt))
    if n_steps < 1:
        raise InputError('duration %g s is shorter than one step dt = %g s' % (duration, dt))
    records = _record_steps(n_steps, record_every)
    report = _Progress(progress)
    if integrator == 'adaptive':
        _check_choice(limits, ('spring', 'none'), "limits with integrator 'adaptive'")
        _check_choice(adaptive_method, ADAPTIVE_METHODS, 'adaptive_method')
        rtol = _positive(rtol, 'rtol')
        atol = _positive(atol, 'atol')
    sim = Simulator(model, q0, qd0, dt=dt,
                    integrator='rk4' if integrator == 'adaptive' else integrator,
                    include_friction=include_friction, include_armature=include_armature,
                    limits=limits, clamp_effort=clamp_effort,
                    limit_stiffness=limit_stiffness, limit_damping=limit_damping)
    n = model.dof
    K = len(records)
    ts = np.array(records, dtype=np.float64) * dt
    qs = np.empty((K, n))
    qds = np.empty((K, n))
    taus = np.zeros((K, n))
    zero = np.zeros(n)

    def command(t: float, q: FloatArray, qd: FloatArray, out: FloatArray) -> None:
        if controller is None:
            out[:] = 0.0
            return
        sim._applied_torque(controller(t, q.copy(), qd.copy()), out,
                            what='controller torque at t = %.6g s' % t)

    if integrator == 'adaptive':
        _adaptive(sim, command, ts, qs, qds, taus, rtol, atol, adaptive_method, report)
    else:
        done = 0
        for k, target in enumerate(records):
            if target > done:
                if controller is None:
                    sim._advance(zero, target - done)
                else:
                    tau = np.empty(n)
                    for s in range(done, target):
                        command(s * dt, sim._q, sim._qd, tau)
                        sim._advance(tau, 1)
                done = target
            qs[k] = sim._q
            qds[k] = sim._qd
            command(ts[k], sim._q, sim._qd, taus[k])
            report(target / n_steps)
    kinetic = np.asarray(model.kinetic_energy(qs, qds, include_armature=include_armature))
    potential = np.asarray(model.potential_energy(qs))
    return SimulationResult(t=ts, q=qs, qd=qds, tau=taus, kinetic=kinetic,
                            potential=potential, energy=kinetic + potential,
                            joint_names=tuple(model.joint_names), integrator=integrator,
                            dt=dt)


def _adaptive(sim: Simulator, command, ts: FloatArray, qs: FloatArray, qds: FloatArray,
              taus: FloatArray, rtol: float, atol: float, method: str,
              report: _Progress) -> None:
    """Integrate with scipy's solve_ivp and sample on ``ts``; fills the record arrays."""
    from scipy.integrate import solve_ivp

    n = sim.model.dof
    tau = np.empty(n)
    acc = np.empty(n)
    end = float(ts[-1])

    def rhs(t: float, y: FloatArray) -> FloatArray:
        q = np.ascontiguousarray(y[:n])
        qd = np.ascontiguousarray(y[n:])
        command(t, q, qd, tau)
        model = sim._model
        ints, flat = model.packed
        code = _K.advance(ints, flat, sim._params, 0, q, qd, tau, acc,
                          sim._fext, sim._info)  # 0 steps: accelerations into acc
        if code != _k.OK:
            raise InputError('adaptive simulation failed at t = %.6g s: %s' % (
                t, _massless_message(model, code) or (
                    'mass matrix not positive definite' if code == _k.NOT_POSITIVE_DEFINITE
                    else 'state became NaN/inf')))
        report(t / end)
        return np.concatenate((qd, acc))

    y0 = np.concatenate((sim._q, sim._qd))
    sol = solve_ivp(rhs, (0.0, end), y0, method=method, t_eval=ts, rtol=rtol, atol=atol)
    if sol.status != 0:
        raise InputError('adaptive simulation failed: %s' % sol.message)
    qs[:] = sol.y[:n].T
    qds[:] = sol.y[n:].T
    for k in range(ts.shape[0]):
        command(ts[k], qs[k], qds[k], taus[k])
    sim._steps = int(round(end / sim._dt))
    report(1.0)


# ---------------------------------------------------------------------- precompile steps
def _warm_simulator(model) -> None:
    q, qd, _ = state(model)
    zero = np.zeros(model.dof)
    for integrator in ('semi_implicit_euler', 'rk4'):
        for limits in ('spring', 'hard', 'none'):
            sim = Simulator(model, q, qd, dt=1e-3, integrator=integrator, limits=limits)
            sim.step(zero)
            sim.step(model.gravity_torques(sim.q), steps=2)
            sim.total_energy()


def _warm_simulation(model) -> None:
    q, _, _ = state(model)
    simulate(model, q, duration=0.002, dt=1e-3)
    simulate(model, q, duration=0.002, dt=1e-3, integrator='rk4',
             controller=lambda t, qq, qqd: model.gravity_torques(qq))
    simulate(model, q, duration=0.002, dt=1e-3, integrator='adaptive')


#: Collected by :mod:`manip_dynamics.precompile`.
PRECOMPILE_STEPS = [('simulator steps', _warm_simulator), ('simulation runs', _warm_simulation)]
