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
Test support for the planner -> feedforward_filter -> JTC chain: what a test watches and sends.

Shared by the CI chain test (behind the controller_manager stand-in) and the launch test
against the real controller_manager: :class:`ChainWatch` keeps the joint states, the
filter's events and the observer's contact flag as they arrive; :func:`quintic_plan` is a
planner's kinematically timed plan.
"""

import threading
from typing import Any, Callable, Sequence

from geometry_msgs.msg import WrenchStamped
import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from manip_dynamics.control.goal_endings import read_ending_line
from manip_dynamics.ros.runtime.conversions import duration_msg, stamp_seconds
from manip_dynamics.ros.runtime.node_process import wait_until
from manip_dynamics.ros.runtime.qos import CONTACT_QOS
from manip_dynamics_interfaces.msg import Contact


class ChainWatch:
    """
    Joint states, the filter's events and the contact flag, as received (thread-safe).

    ``states``: (stamp [s], positions, velocities) per /joint_states message, the joints in
    ``names``' order (joint_state_broadcaster lists them in its own); ``events``: the
    filter's ``~/events`` lines; ``contacts``: (stamp [s], contact) per observer message;
    ``residuals``: (stamp [s], strongest normalised residual) per observer message;
    ``pushes``: (stamp [s], |force| [N]) per simulator ``~/applied_wrench`` message (the
    simulator's own clock), which says that a push acted on the simulated arm and when.
    """

    def __init__(self, node: Any, names: Sequence[str]) -> None:
        """Subscribe ``node`` to the three topics (spin it elsewhere)."""
        self.names = list(names)
        self.lock = threading.Lock()
        self.states: list = []
        self.events: list = []
        self.contacts: list = []
        self.residuals: list = []
        self.pushes: list = []
        node.create_subscription(JointState, '/joint_states', self._state, 100)
        node.create_subscription(String, '/feedforward_filter/events', self._event, 100)
        node.create_subscription(Contact, '/external_torque_observer/contact',
                                 self._contact, CONTACT_QOS)
        node.create_subscription(WrenchStamped, '/simulator/applied_wrench', self._push, 100)

    def _state(self, msg: JointState) -> None:
        order = [list(msg.name).index(n) for n in self.names]
        with self.lock:
            self.states.append((stamp_seconds(msg.header.stamp),
                                np.array(msg.position)[order], np.array(msg.velocity)[order]))

    def _event(self, msg: String) -> None:
        with self.lock:
            self.events.append(msg.data)

    def _contact(self, msg: Contact) -> None:
        with self.lock:
            self.contacts.append((stamp_seconds(msg.header.stamp), bool(msg.contact)))
            self.residuals.append((stamp_seconds(msg.header.stamp),
                                   float(msg.strongest_normalized_residual)))

    def _push(self, msg: WrenchStamped) -> None:
        force = msg.wrench.force
        with self.lock:
            self.pushes.append((stamp_seconds(msg.header.stamp),
                                float(np.linalg.norm([force.x, force.y, force.z]))))

    def since(self, stamp: float) -> tuple:
        """Return (stamps [s], positions, velocities) of the states stamped at or after it."""
        with self.lock:
            rows = [s for s in self.states if s[0] >= stamp]
        return (np.array([r[0] for r in rows]), np.array([r[1] for r in rows]),
                np.array([r[2] for r in rows]))

    def goal_endings(self) -> list:
        """
        Return the filter's goal endings so far: (stamp [s], status, text) each, in order.

        The stamp is the newest joint state's when the filter ended the goal (its
        ``~/events`` line says so), on the arm's clock as the contact flags are: a flag
        stamped later has no goal of the filter's to stop.
        """
        with self.lock:
            lines = list(self.events)
        found = (read_ending_line(line) for line in lines)
        return [(stamp, status, text) for status, stamp, text in filter(None, found)]

    def last(self) -> tuple:
        """Return the newest state received: (stamp [s], positions, velocities)."""
        with self.lock:
            return self.states[-1]

    def wait_simulated(self, seconds: float, first_timeout: float,
                       timeout: float | None = None) -> float:
        """
        Wait until the joint states' stamps (simulated time) advance by ``seconds``.

        A chain in co-simulation runs slower than the wall clock on a loaded machine (0.4 of
        it at times on Kilted's CI run), so a plan is waited for on the arm's own clock.

        :param seconds: Simulated time to wait [s].
        :param first_timeout: Longest wait for the first joint state [s].
        :param timeout: Longest wall-clock wait for the advance [s]; default
            ``20 + 10 seconds``.
        :return: The newest joint state's stamp [s].
        :raises AssertionError: No joint state, or simulated time did not advance in time.
        """
        wait_until(lambda: self.states, first_timeout, 'no joint states arrived')
        start = self.last()[0]
        wait_until(lambda: self.last()[0] >= start + seconds,
                   20.0 + 10.0 * seconds if timeout is None else timeout,
                   'simulated time did not advance by %g s' % seconds)
        return self.last()[0]

    def tracking_rms(self, sent: float, desired: 'Desired', qa: np.ndarray, duration: float,
                     period: float = 0.0, onset: float = 0.0,
                     start: float | None = None) -> float:
        """
        Return the RMS of q - q_d [rad] over a plan sent at ``sent`` [s, the arm's clock].

        The plan (a rest-to-rest quintic from ``qa`` (n,), :func:`quintic_plan`) starts at
        ``start`` [s, the arm's clock] when given: a plan sent with that header stamp, which
        JTC starts then (the reference it tracks). Otherwise it is taken to start one
        ``period`` [s] (the controller's update) before the first state that left ``qa`` by
        more than 0.1 mrad; or, with ``onset`` > 0, where the joint that moves farthest has
        made that share of its move, less the time the plan takes to get there (a quintic's
        start is too flat to see behind a real controller's delays). Both read the start
        from the arm's motion, so an arm whose dry friction holds it at first is measured
        from its late breakaway. The RMS is over ``duration`` [s] from the start;
        ``desired`` maps times since the start to the planned positions.

        :raises AssertionError: The arm did not move.
        """
        ts, qs, _ = self.since(sent)
        assert len(ts), 'no joint states since the plan was sent'
        if start is not None:
            assert np.abs(qs - qa).max() > 1e-4, 'the arm did not move'
        elif onset > 0.0:
            span = desired(np.array([duration]))[0] - qa
            j = int(np.argmax(np.abs(span)))   # the joint that moves farthest
            crossed = np.flatnonzero((qs[:, j] - qa[j]) / span[j] >= onset)
            assert crossed.size, 'the arm did not move'
            share = min(r.real for r in np.roots([6.0, -15.0, 10.0, 0.0, 0.0, -onset])
                        if abs(r.imag) < 1e-9 and 0.0 < r.real < 1.0)
            start = ts[crossed[0]] - share * duration
        else:
            moving = np.flatnonzero(np.abs(qs - qa).max(axis=1) > 1e-4)
            assert moving.size, 'the arm did not move'
            start = ts[moving[0]] - period
        inside = (ts >= start) & (ts <= start + duration)
        return float(np.sqrt(np.mean((qs[inside] - desired(ts[inside] - start)) ** 2)))


Desired = Callable[[np.ndarray], np.ndarray]


def continuation_plan(names: Sequence[str], qa: np.ndarray, va: np.ndarray, qb: np.ndarray,
                      duration: float, lead: float = 0.1,
                      points: int = 60) -> JointTrajectory:
    """
    Return a plan from the moving state (``qa``, ``va``) to rest at ``qb``, each (n,).

    A planner's continuation of a motion under way: its first point is the state the motion
    will have ``lead`` [s] from now (``time_from_start = lead``, so the controller reaches
    it from the state it has when the goal arrives), then a quintic per joint with that
    velocity and zero acceleration to rest at ``qb`` over ``duration`` [s]; ``points``
    points with positions, velocities and accelerations.
    """
    T = duration
    d = qb - qa
    # q(t) = qa + va t + c3 t^3 + c4 t^4 + c5 t^5 with q(T) = qb, q'(T) = q''(T) = 0
    c3 = (10 * d - 6 * va * T) / T ** 3
    c4 = (-15 * d + 8 * va * T) / T ** 4
    c5 = (6 * d - 3 * va * T) / T ** 5
    msg = JointTrajectory(joint_names=list(names))
    for t in np.linspace(0.0, T, points):
        msg.points.append(JointTrajectoryPoint(
            positions=(qa + va * t + c3 * t ** 3 + c4 * t ** 4 + c5 * t ** 5).tolist(),
            velocities=(va + 3 * c3 * t ** 2 + 4 * c4 * t ** 3 + 5 * c5 * t ** 4).tolist(),
            accelerations=(6 * c3 * t + 12 * c4 * t ** 2 + 20 * c5 * t ** 3).tolist(),
            time_from_start=duration_msg(float(t + lead))))
    msg.points[-1].velocities = [0.0] * len(names)
    return msg


def quintic_plan(names: Sequence[str], qa: np.ndarray, qb: np.ndarray, duration: float,
                 points: int = 60) -> tuple[JointTrajectory, Desired]:
    """
    Return a planner's plan from ``qa`` to ``qb`` (n,) [rad or m] and its desired positions.

    A rest-to-rest quintic over ``duration`` [s], ``points`` points with positions,
    velocities and accelerations and no efforts (timed kinematically, as MoveIt's time
    parameterizations time one); the function maps times since the start (T,) to the
    desired positions (T, n).
    """
    t = np.linspace(0.0, duration, points)
    s = t / duration
    h = 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5
    hd = (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / duration
    hdd = (60 * s - 180 * s ** 2 + 120 * s ** 3) / duration ** 2
    msg = JointTrajectory(joint_names=list(names))
    for k in range(points):
        msg.points.append(JointTrajectoryPoint(
            positions=(qa + h[k] * (qb - qa)).tolist(), velocities=(hd[k] * (qb - qa)).tolist(),
            accelerations=(hdd[k] * (qb - qa)).tolist(),
            time_from_start=duration_msg(float(t[k]))))

    def desired(tt: np.ndarray) -> np.ndarray:
        return qa + np.interp(tt, t, h)[:, None] * (qb - qa)
    return msg, desired


def quintic_state(qa: np.ndarray, qb: np.ndarray, duration: float,
                  t: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (positions, velocities) (n,) of :func:`quintic_plan`'s motion at ``t`` [s]."""
    s = min(max(t / duration, 0.0), 1.0)
    h = 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5
    hd = (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / duration
    return qa + h * (qb - qa), hd * (qb - qa)
