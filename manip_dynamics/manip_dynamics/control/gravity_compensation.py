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
  JointStateGate`): a glitch is answered with the last good command for at most the hold
  time, then with one zero command, and nothing more until good samples come back;
* the friction feed-forward is :func:`~manip_dynamics.safety.bounded_friction`: never more
  than the friction at the URDF velocity limit;
* ``ramp`` rises from 0 to 1 over ``ramp_time`` from the first good sample, and again after
  every stop;
* :meth:`GravityCompensator.watchdog` stops (one zero command) when the last good sample is
  older than ``timeout``;
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

FloatArray = NDArray[np.float64]

#: Valid ranges (documented in docs/ROS_API.md).
TIMEOUT_RANGE = Range(0.001, 10.0)
RAMP_TIME_RANGE = Range(0.0, 60.0)
EFFORT_SCALE_RANGE = Range(0.0, 1.0, low_open=True)


@dataclass(frozen=True)
class Step:
    """
    What the compensator decided for one sample or watchdog tick.

    :ivar command: Efforts to send [N m or N], command-joint order, or None to send nothing.
    :ivar event: ``''``, ``'started'``, ``'resumed'``, ``'glitch'`` (held or ignored),
        ``'stopped_glitch'``, ``'stopped_stale'``.
    :ivar message: Text for the log (the glitch's reason, the staleness).
    :ivar kind: The glitch's kind (``'velocity'``, ``'position'``), else ``''``.
    """

    command: FloatArray | None
    event: str = ''
    message: str = ''
    kind: str = ''


class GravityCompensator:
    """Turn joint-state samples into safe gravity-compensation commands (module docstring)."""

    def __init__(self, model, index: list[int], *, effort_limits: ArrayLike | None = None,
                 effort_scale: float = 1.0, ramp_time: float = 2.0, timeout: float = 0.1,
                 include_friction: bool = False, gate: JointStateGate | None = None) -> None:
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
        :raises InputError: A setting out of range, effort limits of the wrong length or not
            positive, or a command joint without any effort limit.
        """
        self.model = model
        self.index = list(index)
        self.effort_scale = check_range('effort_scale', effort_scale, EFFORT_SCALE_RANGE)
        self.ramp_time = check_range('ramp_time', ramp_time, RAMP_TIME_RANGE, 's')
        self.timeout = check_range('timeout', timeout, TIMEOUT_RANGE, 's')
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
        self.limits = limits * self.effort_scale
        self._active = False
        self._ramp_start = 0.0
        self._stopped_once = False
        self._last_command: FloatArray | None = None

    @property
    def active(self) -> bool:
        """Return whether commands are being sent (a good sample came within the timeout)."""
        return self._active

    def zero(self) -> FloatArray:
        """Return the all-zero command, shape (len(index),)."""
        return np.zeros(len(self.index))

    def _stop(self, event: str, message: str) -> Step:
        self._active = False
        self._stopped_once = True
        self._last_command = None
        self.gate.reset()
        return Step(self.zero(), event, message)

    def update(self, now: float, q: FloatArray, qd: FloatArray | None) -> Step:
        """
        Return the command for one joint-state sample received at ``now``.

        :param now: Receive time [s, monotonic clock].
        :param q: Joint positions, model order, shape (n,), finite.
        :param qd: Joint velocities, model order, shape (n,), finite, or None.
        :return: The :class:`Step`; its command is finite and within the limits, or None.
        :raises InputError: ``include_friction`` without velocities, or a dynamics error;
            nothing is sent then.
        """
        if self.include_friction and qd is None:
            raise InputError('include_friction is set but joint_states has no velocities')
        verdict = self.gate.check(now, q, qd)
        if not verdict.ok:
            if not self._active:
                return Step(None, 'glitch', verdict.message, verdict.kind)
            if verdict.hold and self._last_command is not None:
                return Step(self._last_command, 'glitch', verdict.message, verdict.kind)
            return self._stop('stopped_glitch', '%s; no good joint_states for more than the '
                              'hold time %g s' % (verdict.message, self.gate.hold_time))
        tau = self.model.gravity_torques(q)
        if self.include_friction:
            tau = tau + bounded_friction(self.model, qd)
        event = ''
        if not self._active:
            self._active = True
            self._ramp_start = now
            event = 'resumed' if self._stopped_once else 'started'
        ramp = 1.0 if self.ramp_time <= 0.0 else min(1.0, max(0.0, now - self._ramp_start)
                                                     / self.ramp_time)
        command = np.clip(ramp * tau[self.index], -self.limits, self.limits)
        if not np.all(np.isfinite(command)):
            return Step(None, 'glitch', 'non-finite efforts %s: nothing sent' % command,
                        'non-finite')
        self._last_command = command
        return Step(command, event)

    def watchdog(self, now: float) -> Step:
        """
        Check the age of the last good sample; stop with one zero command when stale.

        :param now: The current time [s], on the clock of :meth:`update`.
        :return: A :class:`Step` with the zero command when it stops now, else no command.
        """
        last = self.gate.last_good_time
        if not self._active or last is None:
            return Step(None)
        age = now - last
        if age > self.timeout:
            return self._stop('stopped_stale', 'joint_states are %.3f s old (timeout %g s)'
                              % (age, self.timeout))
        return Step(None)


def watchdog_rate_range(timeout: float) -> Range:
    """
    Return the valid watchdog rates [Hz] for a timeout [s]: at least two checks per timeout.

    The stale-input stop then comes at most half a timeout late; the upper bound keeps the
    timer from taking the executor (1 kHz).
    """
    return Range(2.0 / timeout, max(1000.0, math.ceil(2.0 / timeout)))
