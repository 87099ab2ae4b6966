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
Gravity compensation with the safety rules of a physical arm (no ROS).

For every joint-state sample, ``tau = clamp(ramp * (g(q) [+ F(qd)]), +-limit)`` (Craig sec.
6.8 for g(q), sec. 6.11 for the friction F), where

* the sample first passes the plausibility gate (:class:`~manip_dynamics.safety.
  JointStateGate`): a glitch (or a sample waiting for its confirmation) is answered with the
  last good command for at most the hold time, then with the hold command, gravity at the
  last good pose, reported once: a push or a fall is real motion and passes the gate, and
  a stream of glitches never drops the arm;
* the friction feed-forward is :func:`~manip_dynamics.safety.bounded_friction`: never more
  than the friction at the URDF velocity limit;
* ``ramp`` rises from 0 to 1 over ``ramp_time`` from the first good sample, and again after
  every stop;
* :meth:`GravityCompensator.watchdog` acts when no sample at all (good or not) has come for
  longer than ``timeout``: ``stale_action`` ``'hold'`` sends the hold command once (for a
  bare effort-controlled arm, which falls on zero torque), ``'zero'`` one zero command (for
  arms that add gravity themselves: Franka's effort interface, UR's direct torque control);
  see docs/TUTORIAL_REAL_ARM.md;
* every command is finite and within ``+-limit``, or it is not sent.

``gravity_compensation_node`` is a thin ROS adapter over this class.
"""

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.errors import InputError
from manip_dynamics.safety.plausibility import (
    bounded_friction, JointStateGate, missing_effort_limits)
from manip_dynamics.safety.ranges import check_range, Range
from manip_dynamics.safety.staleness import StaleInputWatchdog

FloatArray = NDArray[np.float64]

#: What the compensation does when joint states stop coming (docs/TUTORIAL_REAL_ARM.md).
STALE_ACTIONS = ('hold', 'zero')

#: Valid ranges (documented in docs/ROS_API.md).
TIMEOUT_RANGE = Range(0.001, 10.0)
RAMP_TIME_RANGE = Range(0.0, 60.0)
EFFORT_SCALE_RANGE = Range(0.0, 1.0, low_open=True)


@dataclass(frozen=True)
class Step:
    """
    What the compensator decided for one sample or watchdog tick.

    :ivar command: Efforts to send [N m or N], command-joint order, or None to send nothing.
    :ivar event: ``''``, ``'started'``, ``'resumed'``, ``'glitch'`` (a sample not used:
        the last command again, or the hold command), ``'holding_glitch'`` (not used for
        longer than the hold time: the hold command from now on), ``'recovered'`` (a good
        sample after that), ``'stopped_stale'`` (no sample: one zero command),
        ``'holding_stale'`` (no sample: the hold command once).
    :ivar message: Text for the log (the glitch's reason, the staleness).
    :ivar kind: The gate's kind for a sample not used (``'velocity'``, ``'position'``,
        ``'non-finite'``, ``'suspect'``), else ``''``.
    :ivar overspeed: The gate's overspeed report for a good sample (a joint above its URDF
        velocity limit), else ``''``.
    """

    command: FloatArray | None
    event: str = ''
    message: str = ''
    kind: str = ''
    overspeed: str = ''


class GravityCompensator:
    """Turn joint-state samples into safe gravity-compensation commands (module docstring)."""

    def __init__(self, model, index: list[int], *, effort_limits: ArrayLike | None = None,
                 effort_scale: float = 1.0, ramp_time: float = 2.0, timeout: float = 0.1,
                 include_friction: bool = False, gate: JointStateGate | None = None,
                 stale_action: str = 'hold', watchdog_period: float | None = None) -> None:
        """
        Set up for one model and one command-joint order.

        :param model: The :class:`~manip_dynamics.RobotModel` (payloads included).
        :param index: Model-order index of every command joint, in the command's order.
        :param effort_limits: Limits per command joint [N m or N], shape (len(index),);
            default the URDF's. Required for joints whose URDF has no effort limit.
        :param effort_scale: Fraction of the limits used, in (0, 1].
        :param ramp_time: Ramp-in time [s], in [0, 60].
        :param timeout: Stop when the last good sample is older [s], in [0.001, 10].
        :param include_friction: Add the bounded friction feed-forward (needs velocities).
        :param gate: The plausibility gate; default one with its default settings.
        :param stale_action: On stale input, ``'hold'`` (gravity at the last good pose) or
            ``'zero'`` (see :data:`STALE_ACTIONS`).
        :param watchdog_period: How often the caller calls :meth:`watchdog` [s]; default
            ``timeout / 4``.
        :raises InputError: A setting out of range, effort limits of the wrong length or not
            positive, a command joint without any effort limit, an unknown stale_action.
        """
        if stale_action not in STALE_ACTIONS:
            raise InputError('stale_action must be one of %s, got %r'
                             % (STALE_ACTIONS, stale_action))
        self.stale_action = stale_action
        self.model = model
        self.index = list(index)
        self.effort_scale = check_range('effort_scale', effort_scale, EFFORT_SCALE_RANGE)
        self.ramp_time = check_range('ramp_time', ramp_time, RAMP_TIME_RANGE, 's')
        self.timeout = check_range('timeout', timeout, TIMEOUT_RANGE, 's')
        self._watchdog = StaleInputWatchdog(
            self.timeout, self.timeout / 4.0 if watchdog_period is None else watchdog_period)
        self.include_friction = bool(include_friction)
        self.gate = gate if gate is not None else JointStateGate(model)
        if self.gate.hold_time > self.timeout:
            raise InputError('the glitch hold time %g s must not exceed the timeout %g s'
                             % (self.gate.hold_time, self.timeout))
        names = [model.joint_names[i] for i in self.index]
        if effort_limits is None:
            missing = missing_effort_limits(model, self.index)
            if missing:
                raise InputError('joints %s have no effort limit in the URDF: give the limits '
                                 '(effort_limits) before efforts are sent to an arm' % missing)
            limits = np.asarray(model.effort_limits, dtype=np.float64)[self.index]
        else:
            limits = np.array(effort_limits, dtype=np.float64).reshape(-1)
            if limits.shape != (len(self.index),):
                raise InputError('effort_limits has %d values for the %d command joints %s'
                                 % (limits.size, len(self.index), names))
            if not (np.all(np.isfinite(limits)) and np.all(limits > 0.0)):
                raise InputError('effort_limits must be finite and > 0 for joints %s, got %s'
                                 % (names, limits.tolist()))
        self._full_limits = limits
        self.limits = limits * self.effort_scale
        self._active = False
        self._ramp_start = 0.0
        self._stopped_once = False
        self._last_command: FloatArray | None = None
        self._ramp = 0.0        # the ramp factor of the last command
        self._holding = False   # samples not used for longer than the hold time

    def rescale(self, effort_scale: float) -> None:
        """
        Use ``effort_scale`` of the effort limits from the next command on (a running arm).

        :param effort_scale: Fraction of the limits, in (0, 1].
        :raises InputError: Outside that range (the old scale stays).
        """
        scale = check_range('effort_scale', effort_scale, EFFORT_SCALE_RANGE)
        self.limits = self._full_limits * scale
        self.effort_scale = scale

    @property
    def active(self) -> bool:
        """Return whether commands are being sent (a good sample came within the timeout)."""
        return self._active

    def zero(self) -> FloatArray:
        """Return the all-zero command, shape (len(index),)."""
        return np.zeros(len(self.index))

    def hold_command(self) -> FloatArray | None:
        """
        Return the hold command: gravity at the last good pose, ramped as the last command.

        No friction and nothing else velocity-dependent: it holds the arm where the last
        trustworthy sample saw it. None before the first good sample.
        """
        q = self.gate.last_q
        if q is None:
            return None
        tau = self._ramp * self.model.gravity_torques(q)[self.index]
        command = np.clip(tau, -self.limits, self.limits)
        return command if np.all(np.isfinite(command)) else None

    def _stop(self, event: str, message: str) -> Step:
        """Stop on stale input: one zero command, or the hold command (``stale_action``)."""
        command = self.zero() if self.stale_action == 'zero' else self.hold_command()
        if command is None:
            command = self.zero()
        if self.stale_action == 'zero':
            self._ramp = 0.0
        self._active = False
        self._stopped_once = True
        self._holding = False
        self._last_command = None
        self.gate.reset()
        return Step(command, event, message)

    def update(self, now: float, q: FloatArray, qd: FloatArray | None,
               stamp: float | None = None) -> Step:
        """
        Return the command for one joint-state sample received at ``now``.

        :param now: Receive time [s, monotonic clock].
        :param q: Joint positions, model order, shape (n,).
        :param qd: Joint velocities, model order, shape (n,), or None.
        :param stamp: The time the sample was taken [s] (its header stamp) for the gate's
            consistency check; None = ``now``.
        :return: The :class:`Step`; its command is finite and within the limits, or None.
        :raises InputError: ``include_friction`` without velocities, or a dynamics error;
            nothing is sent then.
        """
        if self.include_friction and qd is None:
            raise InputError('include_friction is set but joint_states has no velocities')
        verdict = self.gate.check(now, q, qd, stamp)
        if not verdict.ok:
            if not self._active:
                return Step(None, 'glitch', verdict.message, verdict.kind)
            if verdict.hold and self._last_command is not None:
                return Step(self._last_command, 'glitch', verdict.message, verdict.kind)
            event = 'glitch' if self._holding else 'holding_glitch'
            self._holding = True
            return Step(self.hold_command(), event, '%s; no good joint_states for more than '
                        'the hold time %g s: holding gravity at the last good pose'
                        % (verdict.message, self.gate.hold_time), verdict.kind)
        tau = self.model.gravity_torques(q)
        if self.include_friction:
            tau = tau + bounded_friction(self.model, qd)
        event = ''
        if self._holding:
            self._holding = False
            event = 'recovered'
        if not self._active:
            self._active = True
            # ramp in from where the output was: from zero after a zero command or at the
            # start, on from the held command after a hold
            self._ramp_start = now - self._ramp * self.ramp_time
            event = 'resumed' if self._stopped_once else 'started'
        ramp = 1.0 if self.ramp_time <= 0.0 else min(1.0, max(0.0, now - self._ramp_start)
                                                     / self.ramp_time)
        command = np.clip(ramp * tau[self.index], -self.limits, self.limits)
        if not np.all(np.isfinite(command)):
            return Step(None, 'glitch', 'non-finite efforts %s: nothing sent' % command,
                        'non-finite')
        self._ramp = ramp
        self._last_command = command
        return Step(command, event, overspeed=verdict.overspeed)

    def watchdog(self, now: float) -> Step:
        """
        Check the age of the last sample received (good or not); act once when stale.

        A stream of samples the gate does not use is not stale input (the update answers
        it). A tick after the caller itself slept gives no verdict
        (:class:`~manip_dynamics.safety.staleness.StaleInputWatchdog`). With no sample for
        longer than ``timeout``: ``stale_action`` ``'zero'`` sends one zero command,
        ``'hold'`` the hold command once; then nothing until samples come back.

        :param now: The current time [s], on the clock of :meth:`update`.
        :return: A :class:`Step` with that command when it stops now, else no command.
        """
        age = self._watchdog.stale_age(now, self.gate.last_seen_time)
        if not self._active:
            return Step(None)
        if age is not None:
            if self.stale_action == 'zero':
                return self._stop('stopped_stale', 'joint_states are %.3f s old (timeout %g '
                                  's): sent one zero command' % (age, self.timeout))
            return self._stop('holding_stale', 'joint_states are %.3f s old (timeout %g s): '
                              'holding gravity at the last good pose' % (age, self.timeout))
        return Step(None)


def watchdog_rate_range(timeout: float) -> Range:
    """
    Return the valid watchdog rates [Hz] for a timeout [s]: at least two checks per timeout.

    The stale-input stop then comes at most half a timeout late; the upper bound keeps the
    timer from taking the executor (1 kHz).
    """
    return Range(2.0 / timeout, max(1000.0, math.ceil(2.0 / timeout)))
