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
Synthetic recordings from the suite's simulator: a "true" arm, a tracking controller, noise.

Used by the tests, the documentation's plots and ``manip-dynamics identify simulate``: the
truth is the simulated arm (:func:`manip_dynamics.simulation.simulate`, Craig sec. 6.12),
never the estimator's own equations.  The controller is computed torque with the nominal
model (Craig sec. 10.6 form, ``tau = ID_nom(q, qd, qdd_d + Kp e + Kd ed) + F_nom(qd)``), so
the arm follows the excitation closely but not exactly, as a real one would.
"""

from dataclasses import dataclass, replace
import math

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.identification.data import Recording
from manip_dynamics.identification.excitation import FourierTrajectory
from manip_dynamics.model.rigid_body_tree import BodyInertia
from manip_dynamics.spatial import axis_angle_matrix

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Noise:
    """Standard deviations of white Gaussian sensor noise: position, velocity, effort."""

    position: float = 0.0
    velocity: float = 0.0
    effort: FloatArray | float = 0.0


def perturbed_model(model, *, seed: int = 0, low: float = 0.1, high: float = 0.3,
                    damping: tuple[float, float] = (0.2, 0.6),
                    coulomb: tuple[float, float] = (0.3, 1.0)):
    """
    Return a physically consistent "true" arm: every body perturbed by 10 to 30 %.

    Per body: the mass and the inertia about the centre of mass are scaled by
    ``1 +- u`` (u uniform in [low, high], random sign), the inertia is also turned by a
    random rotation of 5 degrees (a rotated, scaled valid inertia stays valid), and the
    centre of mass moves by ``u |c|`` (at least 5 mm) in a random direction.  Viscous and
    Coulomb friction are drawn uniformly from the given ranges [N m s/rad], [N m].

    :param model: The nominal model (not changed).
    :param seed: Random seed.
    :return: A new :class:`~manip_dynamics.RobotModel` with the true parameters.
    """
    rng = np.random.default_rng(seed)
    inertia = model.body_inertia
    n = model.dof

    def factor() -> float:
        return 1.0 + rng.choice((-1.0, 1.0)) * rng.uniform(low, high)

    mass = np.array([m * factor() for m in inertia.mass])
    com = inertia.com.copy()
    i_c = inertia.inertia.copy()
    for k in range(n):
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        shift = max(0.005, rng.uniform(low, high) * float(np.linalg.norm(com[k])))
        com[k] = com[k] + shift * direction
        axis = rng.normal(size=3)
        rot = axis_angle_matrix(axis / np.linalg.norm(axis), math.radians(5.0))
        i_c[k] = factor() * (rot @ i_c[k] @ rot.T)
    tree = replace(model.tree, inertia=BodyInertia(mass, com, i_c))
    return type(model)(tree, gravity=model.gravity,
                       damping=rng.uniform(*damping, n), friction=rng.uniform(*coulomb, n),
                       armature=model.armature, friction_velocity=model.friction_velocity)


def tracking_controller(nominal, trajectory: FourierTrajectory, *, kp: float = 400.0,
                        kd: float = 40.0, delay: float = 0.0):
    """
    Return ``controller(t, q, qd) -> tau``: computed torque on the nominal model.

    ``tau = ID_nom(q, qd, qdd_d + kp e + kd ed) + F_nom(qd_d)``.

    :param nominal: The model the controller believes in.
    :param trajectory: The desired motion (``t - delay``; held at ``q(0)`` before).
    :param kp: Position gain [1/s^2] (unit mass); ``kd`` velocity gain [1/s].
    :param delay: Start time of the trajectory [s].
    """
    def controller(t: float, q: FloatArray, qd: FloatArray) -> FloatArray:
        qr, qdr, qddr = trajectory.evaluate(np.array([max(0.0, t - delay)]))
        if t < delay:
            qdr, qddr = 0.0 * qdr, 0.0 * qddr
        acc = qddr[0] + kp * (qr[0] - q) + kd * (qdr[0] - qd)
        # friction feed-forward on the desired velocity: on the measured one the steep
        # Coulomb sign would be a stiff feedback that chatters at the control rate
        return (nominal.inverse_dynamics(q, qd, acc)
                + nominal.friction_torques(qdr[0]))
    return controller


def simulate_recording(true_model, nominal, trajectory: FourierTrajectory, *,
                       duration: float, rate: float = 250.0, dt: float = 1e-3,
                       noise: Noise | None = None, seed: int = 0, kp: float = 400.0,
                       kd: float = 40.0, progress=None) -> tuple[Recording, Recording]:
    """
    Simulate the true arm following ``trajectory`` and record it like a joint_states topic.

    The simulation starts at rest at the trajectory's start (semi-implicit Euler, whose
    linearly implicit friction keeps the steep Coulomb sign stable; friction on, the true
    arm's rotor inertias when it has any, joint-limit springs on); it is recorded every
    ``1 / rate`` s; the recorded effort is the torque applied from that sample on.

    :param true_model: The simulated arm.
    :param nominal: The controller's model.
    :param trajectory: The excitation.
    :param duration: Simulated time [s].
    :param rate: Recording rate [Hz]; ``1 / (rate dt)`` must be an integer.
    :param dt: Simulation step [s].
    :param noise: Sensor noise added to the second recording (default none).
    :param seed: Noise seed.
    :return: ``(clean, noisy)`` recordings (equal when there is no noise).
    """
    from manip_dynamics.simulation.simulator import simulate

    every = int(round(1.0 / (rate * dt)))
    if abs(every * rate * dt - 1.0) > 1e-9:
        raise ValueError('1 / (rate dt) = %g must be an integer' % (1.0 / (rate * dt)))
    q0 = trajectory.evaluate(np.array([0.0]))[0][0]
    result = simulate(true_model, q0, duration=duration, dt=dt,
                      include_armature=bool(np.any(true_model.armature > 0.0)),
                      controller=tracking_controller(nominal, trajectory, kp=kp, kd=kd),
                      record_every=every, progress=progress)
    names = tuple(true_model.joint_names)
    clean = Recording(result.t.copy(), result.q.copy(), result.qd.copy(), result.tau.copy(),
                      names)
    noise = noise or Noise()
    rng = np.random.default_rng(seed)
    shape = clean.q.shape
    noisy = Recording(clean.t.copy(), clean.q + noise.position * rng.normal(size=shape),
                      clean.qd + noise.velocity * rng.normal(size=shape),
                      clean.tau + np.asarray(noise.effort) * rng.normal(size=shape), names)
    return clean, noisy
