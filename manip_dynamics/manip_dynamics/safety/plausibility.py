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
The plausibility gate for joint states that can move an arm: glitches out, real motion in.

A joint-state driver glitches now and then: one sample with a velocity of 1e6 rad/s, a
position decoded from a garbled frame. Computed into a torque, such a sample commands full
effort (friction feed-forward of a huge velocity) or a pose the arm is not in. But an arm
also moves fast for real: a push, a fall, a collision swings a light wrist past its URDF
velocity limit (a 15 N push took cobot7's wrist to 1.5 x its limit behind a delayed
controller; a free fall at zero torque in the simulator reaches 14 x, a 150 N push 26 x).
Treating such a sample as a glitch stops the torque and drops the arm. So the
gate judges a sample by what its neighbours say, and by bounds no real motion reaches:

* **Absolute bounds** (rejected at once): a non-finite value; ``|qd_i|`` above
  ``max(velocity_factor x velocity_limit_i,`` :data:`MAX_VELOCITY` ``)``, a physical
  ceiling far above any real motion (default 100 x the limit, never below 1000 rad/s or
  m/s): it catches overflowed and absurd values, the consistency check the rest;
  ``q_i`` farther than ``position_margin`` outside its URDF limits.
* **Consistency with the last good sample** (times from the samples' own stamps, ``dt``,
  uncertain by ``tau`` = :data:`TIMING_TOLERANCE` x dt + :data:`TIMING_SLACK`, for stamps
  that are update times rather than sample times): the velocity may change by at most
  ``a_max x (dt + tau) +`` :data:`VELOCITY_TOLERANCE`, ``a_max`` per joint the larger of
  ``max_acceleration`` and what the arm's dynamics allow with torques and pushes up to the
  effort limits (:meth:`JointStateGate.acceleration_bound`: at the slower of the two
  states, and at the other with its velocities clipped to what the slower one can reach,
  so that a velocity glitch does not excuse itself through its own Coriolis terms). And
  the positions must have moved as such a velocity moves them: a velocity going from
  ``qd_a`` to ``qd_b`` with ``|qdd| <= A`` in a time ``T`` moves the joint by
  ``(qd_a + qd_b)/2 T -+ (A^2 T^2 - (qd_b - qd_a)^2) / (4 A)`` (exact for a constant
  acceleration, ``A T^2 / 4`` either way for a velocity that rose and fell between the
  samples), for any ``T`` in ``[dt - tau, dt + tau]``, within :data:`POSITION_TOLERANCE`.
  A velocity glitch the positions do not show is off by about ``|dqd| dt / 2``.
* **A sample that fails the consistency check is suspect, not rejected**: the caller holds
  the last good state for it (:attr:`GateVerdict.hold`). The next samples decide. One
  consistent with the last good sample again: the suspects were glitches (each off the path
  between the two counts as ``'inconsistent'``; one on the way, a joint bouncing off its
  stop faster than a sample, does not). :data:`CONFIRM_SAMPLES` suspects in a row that agree
  with each other: the motion was real (a velocity step at an impact, a reset that moved the
  arm) and the stream goes on from the last of them (:attr:`GateVerdict.confirmed`). A real
  event costs two samples of delay; a glitch, even one repeated in the next frame, never
  reaches the torque.
* **Duplicates** (the same positions and velocities again with the same stamp, or while
  the velocities say the arm moves: a ros2_control hardware interface repeats the old
  sample when none came) are plausible but carry no news: :attr:`GateVerdict.duplicate`;
  the last good sample keeps its stamp. At rest equal samples with new stamps are what the
  arm does, and are ordinary good samples.
* **After a pause** longer than :data:`CONSISTENCY_WINDOW` there is nothing to compare
  with: the sample starts a new stream (absolute bounds only).
* **Overspeed** (``|qd_i|`` above the URDF velocity limit, below the ceiling) is an event to
  report (:attr:`GateVerdict.overspeed` names the joint), not an input error.

A rejected or suspect sample is answered by the caller with the last good state for at most
``hold_time`` seconds (:attr:`GateVerdict.hold`); after that :attr:`GateVerdict.expired`
says so, and the caller holds its last command (gravity at the last good pose) and reports
it. A stream of rejected samples is not stale input: staleness is the age of the last
sample *received* (:attr:`JointStateGate.last_seen_time`), whatever its verdict.
"""

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.safety.ranges import check_range, Range
from manip_dynamics.small_arrays import all_finite, all_true, any_true, same_values

FloatArray = NDArray[np.float64]

#: Velocity ceiling [rad/s or m/s]: for joints without a velocity limit, and the floor of
#: every joint's ceiling. No manipulator joint turns at 1000 rad/s (about 10,000 rpm after
#: the gearbox), while a light simulated link pushed or falling freely reaches 150 rad/s.
MAX_VELOCITY = 1000.0

#: Largest |position| accepted for a joint without position limits [rad or m].
MAX_POSITION = 1.0e4

#: Position noise the consistency check allows [rad or m] (encoder resolution, filtering).
POSITION_TOLERANCE = 1.0e-3

#: Velocity noise the consistency check allows [rad/s or m/s] (differentiated encoders).
VELOCITY_TOLERANCE = 0.05

#: Uncertainty of a stamp difference, as a fraction of it plus :data:`TIMING_SLACK` [s]:
#: behind a controller_manager a stamp is the update time, not the time the sample was taken.
TIMING_TOLERANCE = 0.5
TIMING_SLACK = 1.0e-4

#: Suspect samples that must agree with each other before the stream goes on from them.
CONFIRM_SAMPLES = 3

#: Suspects kept for judging when the stream comes back (a bound for endless glitches).
MAX_PENDING = 256

#: Samples further apart than this [s] are not compared (a new stream after a pause).
CONSISTENCY_WINDOW = 0.25

#: Valid ranges of the gate's settings (documented in docs/ROS_API.md).
VELOCITY_FACTOR_RANGE = Range(1.0, 1000.0)
POSITION_MARGIN_RANGE = Range(0.0, 10.0)
HOLD_TIME_RANGE = Range(0.0, 10.0)
MAX_ACCELERATION_RANGE = Range(1.0, 1.0e7)

#: Defaults: a ceiling of 100 x the velocity limit (at least :data:`MAX_VELOCITY`), 0.2 rad
#: (or m) beyond the limits, 50 ms of hold, velocity steps up to 2000 rad/s^2 believed at
#: once (a 15 N push on cobot7 accelerates the wrist at about 40 rad/s^2; an impact or a
#: joint stop more, and such a sample waits one sample for its confirmation).
DEFAULT_VELOCITY_FACTOR = 100.0
DEFAULT_POSITION_MARGIN = 0.2
DEFAULT_HOLD_TIME = 0.05
DEFAULT_MAX_ACCELERATION = 2000.0

#: Kinds of rejection counted in :attr:`JointStateGate.rejected`.
REJECTION_KINDS = ('velocity', 'position', 'non-finite', 'inconsistent')


@dataclass(frozen=True)
class GateVerdict:
    """
    What the gate says of one sample.

    :ivar ok: The sample is plausible (and is now the last good state).
    :ivar kind: For a sample not used: ``'velocity'``, ``'position'``, ``'non-finite'``
        (rejected) or ``'suspect'`` (inconsistent with the last good sample, waiting for the
        next one); else ``''``.
    :ivar message: Why (names the joint, the value and the bound).
    :ivar hold: Not used, and the last good state is recent enough to stand in for it.
    :ivar expired: Not used, and no good sample for longer than the hold time: hold the last
        command (gravity at the last good pose) and report it.
    :ivar duplicate: OK, but the same moving sample again (same values): no news.
    :ivar confirmed: OK, and it confirmed a suspect sample: a real fast event (or a jump such
        as a reset) moved the stream; consumers that integrate samples restart here.
    :ivar overspeed: OK, but a joint moves faster than its URDF velocity limit: the text
        names it (``''`` when none does).
    """

    ok: bool
    kind: str = ''
    message: str = ''
    hold: bool = False
    expired: bool = False
    duplicate: bool = False
    confirmed: bool = False
    overspeed: str = ''


def _velocity_bounds(model, factor: float) -> FloatArray:
    """Return the velocity ceiling per joint [rad/s or m/s], shape (n,)."""
    limits = np.asarray(model.velocity_limits, dtype=np.float64)
    known = np.isfinite(limits) & (limits > 0.0)
    return np.where(known, np.maximum(factor * np.where(known, limits, 0.0), MAX_VELOCITY),
                    MAX_VELOCITY)


class _Sample:
    """One joint-state sample as the gate keeps it."""

    __slots__ = ('t', 'q', 'qd', 'reach')

    def __init__(self, t: float, q: FloatArray, qd: FloatArray | None) -> None:
        self.t = t
        self.q = q
        self.qd = qd
        #: The accelerations the arm can reach from this state, per joint (computed once,
        #: when a velocity step first needs it: a suspect chain compares with the same
        #: good sample again and again).
        self.reach: FloatArray | None = None


class JointStateGate:
    """
    Reject glitches, let real motion through, hold the last good state (module docstring).

    Not thread-safe: one gate per stream of samples. ``now`` is the caller's clock (a node
    uses the monotonic receive time) for the hold time and staleness; ``stamp`` the time the
    sample was taken (its header stamp) for the consistency check, both in seconds.
    """

    def __init__(self, model, *, velocity_factor: float = DEFAULT_VELOCITY_FACTOR,
                 position_margin: float = DEFAULT_POSITION_MARGIN,
                 hold_time: float = DEFAULT_HOLD_TIME,
                 max_acceleration: float = DEFAULT_MAX_ACCELERATION) -> None:
        """
        Set the bounds from the model's URDF limits.

        :param model: The :class:`~manip_dynamics.RobotModel` (limits in model order).
        :param velocity_factor: The velocity ceiling is ``max(velocity_factor *
            velocity_limit_i,`` :data:`MAX_VELOCITY` ``)``; in :data:`VELOCITY_FACTOR_RANGE`.
        :param position_margin: Reject ``q_i`` farther than this outside
            ``[lower_i, upper_i]`` [rad or m]; in :data:`POSITION_MARGIN_RANGE`.
        :param hold_time: How long the last good state may stand in for samples not used
            [s]; in :data:`HOLD_TIME_RANGE`.
        :param max_acceleration: Largest velocity change per second believed without a
            confirming sample [rad/s^2 or m/s^2]; in :data:`MAX_ACCELERATION_RANGE`.
        :raises InputError: A setting outside its range.
        """
        self.velocity_factor = check_range('velocity_factor', velocity_factor,
                                           VELOCITY_FACTOR_RANGE)
        self.position_margin = check_range('position_margin', position_margin,
                                           POSITION_MARGIN_RANGE, 'rad or m')
        self.hold_time = check_range('hold_time', hold_time, HOLD_TIME_RANGE, 's')
        self.max_acceleration = check_range('max_acceleration', max_acceleration,
                                            MAX_ACCELERATION_RANGE, 'rad/s^2 or m/s^2')
        self._names = tuple(model.joint_names)
        self._model = model
        effort = np.asarray(model.effort_limits, dtype=np.float64)
        self._effort = np.where(np.isfinite(effort) & (effort > 0.0), effort, 0.0)
        self._vmax = _velocity_bounds(model, self.velocity_factor)
        limits = np.asarray(model.velocity_limits, dtype=np.float64)
        self._vlimit = np.where(np.isfinite(limits) & (limits > 0.0), limits, np.inf)
        lower = np.asarray(model.position_lower, dtype=np.float64)
        upper = np.asarray(model.position_upper, dtype=np.float64)
        self._lo = np.where(np.isfinite(lower), lower - self.position_margin, -MAX_POSITION)
        self._hi = np.where(np.isfinite(upper), upper + self.position_margin, MAX_POSITION)
        # the joint stops themselves (where a stop's reaction, no effort limit, acts)
        stops = np.isfinite(lower) & np.isfinite(upper) & (lower < upper)
        self._stop_lo = np.where(stops, lower, -np.inf)
        self._stop_hi = np.where(stops, upper, np.inf)
        #: Samples rejected, per kind (suspects count as ``'inconsistent'`` once the next
        #: sample showed them to be glitches).
        self.rejected: dict[str, int] = dict.fromkeys(REJECTION_KINDS, 0)
        #: Suspect samples so far, and how many of them the next sample confirmed.
        self.suspects = 0
        self.confirmations = 0
        #: Duplicate samples and samples with a joint above its velocity limit.
        self.duplicates = 0
        self.overspeeds = 0
        self.last_q: FloatArray | None = None
        self.last_qd: FloatArray | None = None
        self.last_good_time: float | None = None
        #: Receive time of the last sample of any verdict (staleness is measured from it).
        self.last_seen_time: float | None = None
        self._good: _Sample | None = None
        # suspect samples that agree with each other (the newest last), and every suspect
        # since the last good sample (judged when the stream comes back to it)
        self._chain: list[_Sample] = []
        self._pending: list[_Sample] = []

    @property
    def velocity_bounds(self) -> FloatArray:
        """Return the velocity ceiling per joint [rad/s or m/s], shape (n,)."""
        return self._vmax.copy()

    def summary(self) -> str:
        """Return the counts so far as one line for a log (rejections by kind, suspects)."""
        rejected = ', '.join('%d %s' % (n, kind) for kind, n in self.rejected.items() if n)
        return '%d rejected%s, %d suspect (%d confirmed), %d duplicate, %d overspeed' % (
            sum(self.rejected.values()), ' (%s)' % rejected if rejected else '',
            self.suspects, self.confirmations, self.duplicates, self.overspeeds)

    def reset(self) -> None:
        """Forget the last good state (e.g. after a stop): the next good sample starts over."""
        self.last_q = self.last_qd = None
        self.last_good_time = None
        self._good = None
        self._chain, self._pending = [], []

    def problem(self, q: FloatArray, qd: FloatArray | None) -> tuple[str, str]:
        """
        Return ``(kind, message)`` of the first value beyond the absolute bounds, or ``('', '')``.

        :param q: Joint positions, model order, shape (n,).
        :param qd: Joint velocities, shape (n,), or None when not measured.
        """
        if not (all_finite(q) and (qd is None or all_finite(qd))):
            values = q if qd is None else np.concatenate([q, qd])
            i = int(np.argmax(~np.isfinite(values))) % len(self._names)
            return 'non-finite', 'joint %r has a non-finite position or velocity: ' \
                'rejected as a glitch' % self._names[i]
        if qd is not None:
            over = np.abs(qd) > self._vmax
            if any_true(over):
                i = int(np.argmax(over))
                return 'velocity', 'joint %r velocity %.6g exceeds %g (no real motion is ' \
                    'that fast: %g x its velocity limit, at least %g): rejected as a ' \
                    'glitch' % (self._names[i], qd[i], self._vmax[i], self.velocity_factor,
                                MAX_VELOCITY)
        out = (q < self._lo) | (q > self._hi)
        if any_true(out):
            i = int(np.argmax(out))
            return 'position', 'joint %r position %.6g is outside [%.6g, %.6g] (its limits ' \
                'with a margin of %g): rejected as a glitch' % (
                    self._names[i], q[i], self._lo[i], self._hi[i], self.position_margin)
        return '', ''

    def inconsistency(self, a: _Sample, b: _Sample) -> str:
        """
        Return why sample ``b`` contradicts the earlier sample ``a``, or ``''``.

        The velocity may change by at most the acceleration bound over the interval, and
        the positions must move as such a velocity moves them, within the stamps'
        uncertainty and the noise (module docstring). Samples more than
        :data:`CONSISTENCY_WINDOW` apart are not compared; a stamp that does not advance is
        inconsistent (out of order, or a reset of the source's clock).
        """
        dt = b.t - a.t
        if dt > CONSISTENCY_WINDOW:
            return ''
        if dt <= 0.0:
            return 'its stamp is %.6g s before the last good one' % -dt
        tau = TIMING_TOLERANCE * dt + TIMING_SLACK
        dq = b.q - a.q
        if a.qd is None or b.qd is None:
            worst = np.abs(dq) - self._vmax * (dt + tau) - POSITION_TOLERANCE
            i = int(np.argmax(worst))
            if worst[i] > 0.0:
                return 'joint %r moved %.4g in %.4g s, faster than %g' % (
                    self._names[i], dq[i], dt, self._vmax[i])
            return ''
        mean = 0.5 * (a.qd + b.qd)
        change = np.abs(b.qd - a.qd)
        span = dt + tau
        bound = self.max_acceleration   # the floor; per joint once a step goes beyond it
        if any_true(change > bound * span + VELOCITY_TOLERANCE):
            # beyond the floor: what the arm's own dynamics allow on the way from a
            bound = self.acceleration_bound(a, b, span)
            jump = change - (bound * span + VELOCITY_TOLERANCE)
            i = int(np.argmax(jump))
            if jump[i] > 0.0:
                return 'joint %r velocity went from %.4g to %.4g in %.4g s (more than ' \
                    '%.4g/s^2)' % (self._names[i], a.qd[i], b.qd[i], dt, bound[i])
        # Where a velocity going from qd_a to qd_b with |acceleration| <= A takes the joint
        # in a time T: mean T -+ (A^2 T^2 - dqd^2) / (4 A) (none for the constant
        # acceleration A = dqd / T, A T^2 / 4 for a velocity that rose and fell between the
        # samples: a sample after a gap, a node starved for 184 ms held back a real push's
        # samples without it), for T anywhere in the stamps' uncertainty [dt - tau,
        # dt + tau] with A = max(a_max, dqd / T) (what the velocity check allowed). The
        # ends are linear in T below dqd / a_max and concave or convex above it: extreme
        # at T = dt - tau, dqd / a_max or dt + tau. A velocity glitch the positions do not
        # show is off by about dqd dt / 2, beyond it.
        first = max(dt - tau, 0.0)
        noise = POSITION_TOLERANCE + VELOCITY_TOLERANCE * span
        # mean T for any T in the stamps' uncertainty lies within the bounds (the common
        # sample, a few operations)
        if all_true(np.abs(dq - mean * dt) <= noise + np.abs(mean) * min(dt - first, tau)):
            return ''
        dqd = np.maximum(change - VELOCITY_TOLERANCE, 0.0)
        times = np.empty((3, len(dq)))   # rows: T = dt - tau, dqd / a_max, dt + tau
        times[0] = first
        np.clip(dqd / bound, first, span, out=times[1])
        times[2] = span
        accel = np.maximum(bound, dqd / np.maximum(times, 1e-12))
        slack = np.maximum(accel * accel * times * times - dqd * dqd, 0.0) / (4.0 * accel)
        centre = mean * times
        low = np.min(centre - slack, axis=0)
        high = np.max(centre + slack, axis=0)
        residual = np.maximum(low - noise - dq, dq - high - noise)
        i = int(np.argmax(residual))
        if residual[i] > 0.0:
            return 'joint %r moved %.4g in %.4g s where its velocities (%.4g, %.4g) say %.4g' \
                % (self._names[i], dq[i], dt, a.qd[i], b.qd[i], mean[i] * dt)
        return ''

    def _reach(self, sample: _Sample, qd: FloatArray | None = None) -> FloatArray:
        """
        Return ``|M^-1 (-c - g)| + |M^-1| 2 tau_limit`` at ``sample`` (its velocities or ``qd``).

        Craig eq. 6.59 solved for qdd: the arm's free motion at that state plus what torques
        up to the effort limits and a push up to the same limits (the simulator's push
        limit) can add, per joint, shape (n,) [rad/s^2 or m/s^2]. Cached on the sample for
        its own velocities.
        """
        if qd is None and sample.reach is not None:
            return sample.reach
        try:
            m_inv = np.linalg.inv(self._model.mass_matrix(sample.q))
            free = m_inv @ -self._model.nonlinear_effects(
                sample.q, sample.qd if qd is None else qd)
        except (ValueError, np.linalg.LinAlgError):
            reach = np.zeros(len(self._names))
        else:
            reach = np.abs(free) + np.abs(m_inv) @ (2.0 * self._effort)
            reach = np.where(np.isfinite(reach), reach, 0.0)
        if qd is None:
            sample.reach = reach
        return reach

    def acceleration_bound(self, a: _Sample, b: _Sample, span: float) -> FloatArray:
        """
        Return the largest joint acceleration believed between samples ``a`` and ``b``, (n,).

        Per joint ``max(max_acceleration, reach)`` (:meth:`_reach`), the reach taken at the
        sample that reaches less (the slower state: the anchor) and at the other one's
        positions with its velocities clipped to what the anchor can reach in ``span``
        seconds (twice, the second time with the larger reach). A velocity glitch of 1000
        rad/s must not excuse itself through its own Coriolis terms, on the way into it or
        back out of it, while an arm spinning up or braking (its Coriolis terms growing or
        shrinking on the way) keeps its real acceleration. A light joint (a finger, a
        spinning wrist) accelerates far beyond a fixed bound for real; joints without an
        effort limit get the fixed bound. Impacts on a joint stop go beyond it too: those
        wait for confirming samples.

        :param span: The time between the samples with the stamps' uncertainty [s].

        Both samples carry velocities (samples without them are checked against the
        velocity ceiling only).
        """
        if np.sum(self._reach(b)) < np.sum(self._reach(a)):
            a, b = b, a
        bound = np.maximum(self.max_acceleration, self._reach(a))
        for _ in range(2):
            reachable = bound * span + VELOCITY_TOLERANCE
            bound = np.maximum(bound, self._reach(
                b, np.clip(b.qd, a.qd - reachable, a.qd + reachable)))
        return bound

    def _follows(self, a: _Sample, b: _Sample) -> bool:
        """
        Return whether ``b`` continues ``a``: consistent, and not a repeat of a moving sample.

        At rest equal samples continue each other (an arm reset to a new pose and braked
        there publishes nothing else); the limit of this: a garbled frame that a driver
        repeats unchanged :data:`CONFIRM_SAMPLES` times at rest is taken for a new pose.
        """
        if a.qd is not None and b.qd is not None and same_values(a.q, b.q) and \
                same_values(a.qd, b.qd) and any_true(np.abs(b.qd) > VELOCITY_TOLERANCE):
            return False
        return not self.inconsistency(a, b)

    def _outlier(self, a: _Sample, s: _Sample, b: _Sample) -> bool:
        """
        Return whether ``s`` is off the path from ``a`` to ``b`` (which agree with each other).

        A glitch between two samples that agree is an outlier: its velocity or position is
        off their interpolation by more than the motion between them explains. A sample on
        the way (a joint bouncing off its stop, too fast for one sample) is not. While any
        joint is at or past a stop in one of the three samples, the velocity test is left
        out: the stop's reaction is bounded by no effort limit and, through the mass matrix,
        jolts the other joints too (a free cobot7 pushed into joint 4's stop went -1.1, 4.9,
        0.7 rad/s in three 1 ms samples); the position test stays. Either way the suspect
        was never used: this only decides whether it is counted as a glitch.
        """
        span = b.t - a.t
        if span <= 0.0 or not a.t < s.t < b.t:
            return True
        w = (s.t - a.t) / span
        tau = TIMING_TOLERANCE * span + TIMING_SLACK
        if a.qd is not None and s.qd is not None and b.qd is not None:
            at_stop = any(any_true((x.q >= self._stop_hi) | (x.q <= self._stop_lo))
                          for x in (a, s, b))
            # a velocity outside the range of its neighbours' by e went out and came back:
            # 2 e / a_max of the span at least
            off = np.maximum(s.qd - np.maximum(a.qd, b.qd), np.minimum(a.qd, b.qd) - s.qd) \
                - VELOCITY_TOLERANCE
            reach = 0.5 * (span + tau)
            if not at_stop and np.any(off > self.max_acceleration * reach) and np.any(
                    off > self.acceleration_bound(a, b, span + tau) * reach):
                return True
            speed = np.maximum(np.abs(a.qd), np.abs(b.qd)) + np.abs(s.qd)
        else:
            speed = self._vmax
        middle = (1.0 - w) * a.q + w * b.q
        return bool(np.any(np.abs(s.q - middle) > POSITION_TOLERANCE + speed * (span + tau)))

    def _overspeed(self, qd: FloatArray | None) -> str:
        if qd is None:
            return ''
        over = np.abs(qd) > self._vlimit
        if not any_true(over):
            return ''
        self.overspeeds += 1
        i = int(np.argmax(np.abs(qd) / self._vlimit))
        return 'joint %r moves at %.4g, %.2f x its velocity limit %g' % (
            self._names[i], qd[i], abs(qd[i]) / self._vlimit[i], self._vlimit[i])

    def _accept(self, now: float, sample: _Sample, **flags) -> GateVerdict:
        self._good = sample
        self.last_q = sample.q
        self.last_qd = sample.qd
        self.last_good_time = now
        return GateVerdict(True, overspeed=self._overspeed(sample.qd), **flags)

    def _not_used(self, now: float, kind: str, message: str) -> GateVerdict:
        last = self.last_good_time
        hold = last is not None and now - last <= self.hold_time
        return GateVerdict(False, kind, message, hold=hold,
                           expired=last is not None and not hold)

    def check(self, now: float, q: FloatArray, qd: FloatArray | None = None,
              stamp: float | None = None) -> GateVerdict:
        """
        Judge one sample; remember it when it is plausible.

        :param now: The sample's receive time on the caller's clock [s] (hold time and
            staleness).
        :param q: Joint positions, model order, shape (n,).
        :param qd: Joint velocities, shape (n,), or None when not measured.
        :param stamp: The time the sample was taken [s] (its header stamp); None or 0 =
            ``now``.
        :return: The verdict (see :class:`GateVerdict`).
        """
        self.last_seen_time = now
        kind, message = self.problem(q, qd)
        if kind:
            self.rejected[kind] += 1
            return self._not_used(now, kind, message)
        sample = _Sample(float(stamp) if stamp else float(now), q, qd)
        good = self._good
        if good is None:
            self._chain, self._pending = [], []
            return self._accept(now, sample)
        same = same_values(q, good.q) and (qd is None or good.qd is None
                                           or same_values(qd, good.qd))
        if same and (sample.t == good.t or (qd is not None and any_true(
                np.abs(qd) > VELOCITY_TOLERANCE))):
            # the same sample again (its stamp, or a moving state: at rest equal is normal)
            self.duplicates += 1
            self.last_good_time = now
            return GateVerdict(True, duplicate=True, overspeed=self._overspeed(good.qd))
        if sample.t - good.t > CONSISTENCY_WINDOW:
            # after a pause nothing to compare with: a new stream starts here
            self._chain, self._pending = [], []
            return self._accept(now, sample)
        chain = self._chain
        if chain and self._follows(chain[-1], sample):
            chain.append(sample)
            self._pending.append(sample)
            if len(chain) >= CONFIRM_SAMPLES:
                # the motion goes on from the suspect: an impact, a bounce, a jump
                self._chain, self._pending = [], []
                self.confirmations += 1
                return self._accept(now, sample, confirmed=True)
            self.suspects += 1
            return self._not_used(now, 'suspect', 'it follows a suspect sample: held until '
                                  '%d agree' % CONFIRM_SAMPLES)
        why = self.inconsistency(good, sample)
        if not why:
            for suspect in self._pending:
                # a glitch contradicts both sides; one the next sample agrees with is on
                # the path (a bounce faster than the samples)
                contradicted = self.inconsistency(suspect, sample)
                if contradicted and self._outlier(good, suspect, sample):
                    self.rejected['inconsistent'] += 1   # the odd one out: a glitch
            self._chain, self._pending = [], []
            return self._accept(now, sample)
        self._chain = [sample]
        self._pending.append(sample)
        if len(self._pending) > MAX_PENDING:   # suspects for ever: the oldest was no motion
            del self._pending[0]
            self.rejected['inconsistent'] += 1
        self.suspects += 1
        return self._not_used(now, 'suspect', '%s: held until the next samples confirm it or '
                              'contradict it' % why)


def bounded_friction(model, qd: FloatArray) -> FloatArray:
    """
    Return the friction feed-forward with every velocity clipped to its URDF limit.

    ``F(clip(qd, -v_max, v_max))`` with F = :meth:`RobotModel.friction_torques` (Craig sec.
    6.11): never more than the friction at the velocity limit, whatever a glitch says.
    Joints without a velocity limit are clipped at :data:`MAX_VELOCITY`.

    :param model: The robot model.
    :param qd: Joint velocities [rad/s or m/s], model order, shape (n,).
    :return: Friction torques [N m or N], shape (n,).
    """
    limits = np.asarray(model.velocity_limits, dtype=np.float64)
    vmax = np.where(np.isfinite(limits) & (limits > 0.0), limits, MAX_VELOCITY)
    return model.friction_torques(np.clip(qd, -vmax, vmax))


def missing_effort_limits(model, index: list[int] | None = None) -> list[str]:
    """
    Return the joints (of ``index``, default all) whose URDF effort limit is missing.

    A missing limit is stored as inf (or as 0, which no arm means); a node that sends
    efforts to an arm refuses such a model unless the user gives the limits.

    :param model: The robot model.
    :param index: Model-order indices to look at; default every joint.
    :return: Joint names, model order.
    """
    limits = np.asarray(model.effort_limits, dtype=np.float64)
    picks = range(model.dof) if index is None else index
    return [model.joint_names[i] for i in picks
            if not (math.isfinite(limits[i]) and limits[i] > 0.0)]
