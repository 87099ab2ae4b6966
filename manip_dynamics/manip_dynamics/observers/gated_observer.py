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
The momentum observer behind the plausibility gate: what a node runs on live joint states.

What the gate says of a sample (:class:`~manip_dynamics.safety.JointStateGate`) decides
what the observer does with it:

* rejected (beyond the absolute bounds): not fed; the observer restarts instead (its
  integral would carry the glitch for ever, or, with a momentum that overflows, blind it
  until a manual reset);
* suspect (inconsistent with the last good sample, waiting for the next one) or duplicate
  (the same sample again, e.g. repeated by a ros2_control hardware interface): not fed, the
  observer goes on from the last sample it took, integrating the next one over its true dt;
* confirmed (a real jump of the stream, e.g. a reset that moved the arm): the observer
  restarts there.

The caller publishes nothing for a sample not fed. Every residual returned is finite and
within the joints' effort limits (a larger one is clipped and flagged
:attr:`GatedObserver.saturated`).
"""

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.observers.momentum_observer import MomentumObserver
from manip_dynamics.safety.plausibility import JointStateGate
from manip_dynamics.small_arrays import any_true

FloatArray = NDArray[np.float64]


class GatedObserver:
    """A :class:`MomentumObserver` fed only plausible samples, its output bounded."""

    def __init__(self, observer: MomentumObserver, gate: JointStateGate,
                 effort_limits: FloatArray) -> None:
        """
        Wrap an observer.

        :param observer: The observer (restarted on every rejected sample).
        :param gate: The plausibility gate for its samples.
        :param effort_limits: Bound of ``|r_i|`` [N m or N], shape (n,); inf or 0 = none.
        """
        self.observer = observer
        self.gate = gate
        limits = np.asarray(effort_limits, dtype=np.float64)
        self._bound = np.where(np.isfinite(limits) & (limits > 0.0), limits, np.inf)
        self.rejection = ''
        self.rejection_kind = ''
        self.skipped = ''
        self.saturated = False
        self._between = 0

    def update(self, t: float, now: float, q: FloatArray, qd: FloatArray,
               tau: FloatArray, lost: int = 0) -> FloatArray | None:
        """
        Gate one sample, then run the observer on it.

        :param t: Sample time [s] (the joint_states stamp).
        :param now: Receive time [s] for the gate's hold time.
        :param q: Joint positions, model order, shape (n,), finite.
        :param qd: Joint velocities, shape (n,), finite.
        :param tau: Applied torques, shape (n,), finite.
        :param lost: Samples published and never received since the previous one
            (:meth:`MomentumObserver.update`).
        :return: r [N m or N], finite and within the bounds, or None for a sample not fed:
            :attr:`skipped` is ``'rejected'`` (:attr:`rejection` says why; the observer
            restarts at the next good sample), ``'suspect'`` or ``'duplicate'``.
        :raises InputError: What :meth:`MomentumObserver.update` raises (a time that does
            not advance: the observer unchanged; an overflow: the observer restarted).
        """
        # samples lost on the way since the last one fed (one skipped here, a duplicate
        # above all, is a stale source: not counted, the gap it leaves may be a stall)
        self._between += max(int(lost), 0)
        verdict = self.gate.check(now, q, qd, t)
        self.skipped = ''
        if not verdict.ok:
            self.rejection = verdict.message
            self.rejection_kind = verdict.kind
            if verdict.kind == 'suspect':
                self.skipped = 'suspect'
                return None
            self.skipped = 'rejected'
            self.observer.reset()
            return None
        self.rejection = self.rejection_kind = ''
        if verdict.duplicate:
            self.skipped = 'duplicate'
            return None
        if verdict.confirmed:
            self.observer.reset()
        between, self._between = self._between, 0
        r = self.observer.update(t, q, qd, tau, between)
        self.saturated = any_true(np.abs(r) > self._bound)
        if self.saturated:
            r = np.clip(r, -self._bound, self._bound)
        return r
