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
Trajectory tracking with the safety rules of a physical arm (no ROS).

:class:`SafeTracker` stands between a node's joint-state samples and its tracking
controller (:class:`~manip_dynamics.control.ComputedTorqueController` or
:class:`~manip_dynamics.control.JointImpedanceController`), with the rules
:class:`~manip_dynamics.control.GravityCompensator` applies to gravity compensation:

* every sample passes the plausibility gate (:class:`~manip_dynamics.safety.JointStateGate`)
  first; a duplicate (a hardware interface repeating its old sample) gives no command (the
  one in force stays in force); a sample the gate does not use is answered with the law on
  the last good state while that stands in (``verdict.hold``), then with the hold command
  (gravity at the last good pose, the controller holding that pose), never with silence;
* the trajectory runs on the samples' stamps (the time the hardware took them), the receive
  time where they carry none; a stamp going back (a simulator reset) drops the trajectory
  and holds the new pose;
* :meth:`SafeTracker.watchdog`: no sample at all for longer than ``timeout`` stops the
  motion and sends one ``stale_action`` command (``hold``: gravity at the last good pose;
  ``zero``); the first good sample after it holds its pose;
* every command is the controller's (finite, clamped to its limits) or the clamped hold.

Commands are in the caller's command-joint order (``index`` into the model's joints).
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.safety.staleness import StaleInputWatchdog

FloatArray = NDArray[np.float64]

#: What a node logs for the tracker's good-sample events (:class:`TrackStep`).
EVENT_TEXTS = {
    'recovered': 'good joint_states again: holding the pose of the last good one until a '
                 'trajectory or ~/resume',
    'resumed': 'joint_states are back: holding the current pose',
    'time_back': 'joint_states time went back (a simulator reset?): trajectory dropped, '
                 'holding the new pose'}


@dataclass(frozen=True)
class TrackStep:
    """
    What the tracker decided for one sample or watchdog tick.

    :ivar command: Efforts to send [N m or N], command-joint order; None: send nothing.
    :ivar events: What changed, in order: ``'duplicate'``, ``'glitch'`` (a sample not used,
        answered from the last good state), ``'holding_glitch'`` (not used for longer than the
        gate's hold time: the hold command from now on), ``'recovered'`` (a good sample after
        that), ``'resumed'`` (a good sample after a stop on stale input: its pose held),
        ``'time_back'`` (the stamp went back: trajectory dropped, the new pose held),
        ``'stopped_stale'`` (no sample for ``timeout``: one stale_action command).
    :ivar message: The gate's reason for a sample not used, or the staleness.
    :ivar kind: The gate's kind for a sample not used, else ``''``.
    :ivar overspeed: The gate's overspeed report for a good sample, else ``''``.
    :ivar control: The controller's command object for a good sample (its ``event``,
        ``message``, ``error``, ``saturated``), else None.
    """

    command: FloatArray | None
    events: tuple = ()
    message: str = ''
    kind: str = ''
    overspeed: str = ''
    control: Any = None


class SafeTracker:
    """A tracking controller fed only good samples, answering every other (module docstring)."""

    def __init__(self, controller: Any, gate: Any, index: list[int], *, timeout: float,
                 period: float, stale_action: str = 'hold') -> None:
        """
        Wrap a tracking controller.

        :param controller: The tracking controller (``update``, ``hold``, ``drop``,
            ``limits``, ``model``).
        :param gate: The :class:`~manip_dynamics.safety.JointStateGate` for its samples.
        :param index: The command joints' indices in model order.
        :param timeout: No sample for longer than this is stale input [s].
        :param period: The watchdog's tick period [s] (see
            :class:`~manip_dynamics.safety.staleness.StaleInputWatchdog`).
        :param stale_action: ``'hold'`` or ``'zero'``.
        """
        self.controller = controller
        self.gate = gate
        self.index = list(index)
        self.timeout = float(timeout)
        self.stale_action = stale_action
        self._watchdog = StaleInputWatchdog(timeout, period)
        #: The last good sample: pose, velocities, stamp [s]; None/-1 before the first.
        self.q: FloatArray | None = None
        self.qd: FloatArray | None = None
        self.stamp = -1.0
        #: The trajectory clock [s]: the last good sample's stamp (or receive time).
        self.time = 0.0
        self._stopped = False
        self._holding_glitch = False

    def hold_command(self) -> FloatArray:
        """Return gravity at the last good pose, clamped to the limits, command order."""
        limits = self.controller.limits
        tau = np.clip(self.controller.model.gravity_torques(self.q), -limits, limits)
        return tau[self.index]

    def update(self, now: float, stamp: float, q: FloatArray, qd: FloatArray) -> TrackStep:
        """
        Return the command for one joint-state sample.

        :param now: Its receive time [s, monotonic clock].
        :param stamp: Its header stamp [s] (0: none).
        :param q: Joint positions, model order, shape (n,).
        :param qd: Joint velocities, model order, shape (n,).
        """
        verdict = self.gate.check(now, q, qd, stamp)
        if verdict.duplicate:
            return TrackStep(None, ('duplicate',))
        if not verdict.ok:
            if self.q is None:
                return TrackStep(None, ('glitch',), verdict.message, verdict.kind)
            if verdict.hold and not self._holding_glitch:
                # the law on the last good state, its clock standing still meanwhile
                command = self.controller.update(self.time, self.q, self.qd)
                return TrackStep(command.tau[self.index], ('glitch',), verdict.message,
                                 verdict.kind)
            event = 'glitch' if self._holding_glitch else 'holding_glitch'
            if not self._holding_glitch:
                self._holding_glitch = True
                self.controller.hold(self.q)
            return TrackStep(self.hold_command(), (event,), verdict.message, verdict.kind)
        events = []
        self.q, self.qd = q, qd
        if self._holding_glitch:
            self._holding_glitch = False
            events.append('recovered')
        if self._stopped:
            self._stopped = False
            self.controller.hold(q)
            events.append('resumed')
        elif 0.0 < stamp < self.stamp - 1e-9:
            self.controller.drop(q)
            events.append('time_back')
        self.stamp = stamp
        # the trajectory runs on the hardware's clock: the time the sample was taken, not
        # when it was processed (a simulator in lockstep runs slower than the wall clock)
        self.time = stamp if stamp > 0.0 else now
        command = self.controller.update(self.time, q, qd)
        return TrackStep(command.tau[self.index], tuple(events), overspeed=verdict.overspeed,
                         control=command)

    def watchdog(self, now: float) -> TrackStep:
        """
        Check the age of the last sample received (good or not); stop once when stale.

        :param now: The current time [s], on the clock of :meth:`update`.
        :return: With no sample for longer than ``timeout`` (and a good one before): the
            ``stale_action`` command and ``'stopped_stale'``, once; else no command.
        """
        age = self._watchdog.stale_age(now, self.gate.last_seen_time)
        if age is None or self._stopped or self.q is None:
            return TrackStep(None)
        self._stopped = True
        self.controller.hold(self.q)
        zero = self.stale_action == 'zero'
        return TrackStep(np.zeros(len(self.index)) if zero else self.hold_command(),
                         ('stopped_stale',), 'joint_states are %.3f s old (timeout %g s): '
                         'stopped, sent one %s command' % (
                             age, self.timeout,
                             'zero' if zero else 'hold (gravity at the last good pose)'))

    def goal_ending(self, control: Any, reaction: str) -> tuple | None:
        """
        Say how one control step ends a FollowJointTrajectory goal being tracked.

        :param control: The step's controller command (:attr:`TrackStep.control`).
        :param reaction: The contact reaction in force (for the text).
        :return: None while the goal runs; else (control_msgs result constant name, text):
            ``SUCCESSFUL`` at the end, ``PATH_TOLERANCE_VIOLATED`` after a tracking-error
            stop or a contact stop.
        """
        state = self.controller.state
        if control.event == 'finished' or state == 'done':
            return 'SUCCESSFUL', ''
        if control.event == 'tracking_error':
            return 'PATH_TOLERANCE_VIOLATED', control.message
        if state in ('holding', 'floating'):
            return ('PATH_TOLERANCE_VIOLATED', 'stopped by a contact (reaction %s): call '
                    '~/resume and send the rest of the trajectory again' % reaction)
        return None
