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
The plausibility gate for joint states that can move an arm.

A joint-state driver glitches now and then: one sample with a velocity of 1e6 rad/s, a
position decoded from a garbled frame. Computed into a torque, such a sample commands full
effort (friction feed-forward of a huge velocity) or a pose the arm is not in. The gate
rejects a sample when

* a joint velocity exceeds ``velocity_factor`` times its URDF velocity limit (joints
  without a limit: :data:`MAX_VELOCITY`), or
* a joint position is outside its URDF limits by more than ``position_margin`` (joints
  without limits, e.g. continuous ones: ``|q| >`` :data:`MAX_POSITION`).

After a rejected sample the caller keeps using the last good state for at most
``hold_time`` seconds (:attr:`GateVerdict.hold`); once no good sample has come for longer,
the verdict says :attr:`GateVerdict.stop` and the caller stops as it does on stale input
(zero command). Rejections are counted per kind (:attr:`JointStateGate.rejected`).
"""

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.safety.ranges import check_range, Range

FloatArray = NDArray[np.float64]

#: Largest |velocity| accepted for a joint whose URDF has no velocity limit [rad/s or m/s].
MAX_VELOCITY = 100.0

#: Largest |position| accepted for a joint without position limits [rad or m].
MAX_POSITION = 1.0e4

#: Valid ranges of the gate's settings (documented in docs/ROS_API.md).
VELOCITY_FACTOR_RANGE = Range(1.0, 100.0)
POSITION_MARGIN_RANGE = Range(0.0, 10.0)
HOLD_TIME_RANGE = Range(0.0, 10.0)

#: Defaults: 1.5 x the velocity limit, 0.2 rad (or m) beyond the limits, 50 ms of hold.
DEFAULT_VELOCITY_FACTOR = 1.5
DEFAULT_POSITION_MARGIN = 0.2
DEFAULT_HOLD_TIME = 0.05


@dataclass(frozen=True)
class GateVerdict:
    """
    What the gate says of one sample.

    :ivar ok: The sample is plausible (and is now the last good state).
    :ivar kind: ``'velocity'`` or ``'position'`` for a rejected sample, else ``''``.
    :ivar message: Why it was rejected (names the joint, the value and the bound).
    :ivar hold: Rejected, but the last good state is recent enough to keep using it.
    :ivar stop: Rejected, and no good sample for longer than the hold time: stop.
    """

    ok: bool
    kind: str = ''
    message: str = ''
    hold: bool = False
    stop: bool = False


def _velocity_bounds(model, factor: float) -> FloatArray:
    """Return the largest plausible |qd| per joint [rad/s or m/s], shape (n,)."""
    limits = np.asarray(model.velocity_limits, dtype=np.float64)
    known = np.isfinite(limits) & (limits > 0.0)
    return np.where(known, factor * np.where(known, limits, 0.0), MAX_VELOCITY)


class JointStateGate:
    """
    Reject implausible joint-state samples, hold the last good one, then say stop.

    Not thread-safe: one gate per stream of samples. Times are the caller's clock (a node
    uses the monotonic receive time), in seconds.
    """

    def __init__(self, model, *, velocity_factor: float = DEFAULT_VELOCITY_FACTOR,
                 position_margin: float = DEFAULT_POSITION_MARGIN,
                 hold_time: float = DEFAULT_HOLD_TIME) -> None:
        """
        Set the bounds from the model's URDF limits.

        :param model: The :class:`~manip_dynamics.RobotModel` (limits in model order).
        :param velocity_factor: Reject ``|qd_i| > velocity_factor * velocity_limit_i``;
            in :data:`VELOCITY_FACTOR_RANGE`.
        :param position_margin: Reject ``q_i`` farther than this outside
            ``[lower_i, upper_i]`` [rad or m]; in :data:`POSITION_MARGIN_RANGE`.
        :param hold_time: How long the last good state may stand in for rejected samples
            [s]; in :data:`HOLD_TIME_RANGE`.
        :raises InputError: A setting outside its range.
        """
        self.velocity_factor = check_range('velocity_factor', velocity_factor,
                                           VELOCITY_FACTOR_RANGE)
        self.position_margin = check_range('position_margin', position_margin,
                                           POSITION_MARGIN_RANGE, 'rad or m')
        self.hold_time = check_range('hold_time', hold_time, HOLD_TIME_RANGE, 's')
        self._names = tuple(model.joint_names)
        self._vmax = _velocity_bounds(model, self.velocity_factor)
        lower = np.asarray(model.position_lower, dtype=np.float64)
        upper = np.asarray(model.position_upper, dtype=np.float64)
        self._lo = np.where(np.isfinite(lower), lower - self.position_margin, -MAX_POSITION)
        self._hi = np.where(np.isfinite(upper), upper + self.position_margin, MAX_POSITION)
        self.rejected: dict[str, int] = {'velocity': 0, 'position': 0}
        self.last_q: FloatArray | None = None
        self.last_qd: FloatArray | None = None
        self.last_good_time: float | None = None

    @property
    def velocity_bounds(self) -> FloatArray:
        """Return the largest accepted |qd| per joint [rad/s or m/s], shape (n,)."""
        return self._vmax.copy()

    def reset(self) -> None:
        """Forget the last good state (e.g. after a stop): the next good sample starts over."""
        self.last_q = self.last_qd = None
        self.last_good_time = None

    def problem(self, q: FloatArray, qd: FloatArray | None) -> tuple[str, str]:
        """
        Return ``(kind, message)`` of the first implausible value, ``('', '')`` if none.

        :param q: Joint positions, model order, shape (n,), finite.
        :param qd: Joint velocities, shape (n,), finite, or None when not measured.
        """
        if qd is not None:
            over = np.abs(qd) > self._vmax
            if over.any():
                i = int(np.argmax(over))
                return 'velocity', 'joint %r velocity %.6g exceeds %g (%g x its velocity ' \
                    'limit): rejected as a glitch' % (
                        self._names[i], qd[i], self._vmax[i], self.velocity_factor)
        out = (q < self._lo) | (q > self._hi)
        if out.any():
            i = int(np.argmax(out))
            return 'position', 'joint %r position %.6g is outside [%.6g, %.6g] (its limits ' \
                'with a margin of %g): rejected as a glitch' % (
                    self._names[i], q[i], self._lo[i], self._hi[i], self.position_margin)
        return '', ''

    def check(self, now: float, q: FloatArray, qd: FloatArray | None = None) -> GateVerdict:
        """
        Judge one sample and remember it when it is plausible.

        :param now: The sample's time on the caller's clock [s].
        :param q: Joint positions, model order, shape (n,), finite (checked before).
        :param qd: Joint velocities, shape (n,), finite, or None.
        :return: The verdict (see :class:`GateVerdict`).
        """
        kind, message = self.problem(q, qd)
        if not kind:
            self.last_q = q
            self.last_qd = qd
            self.last_good_time = now
            return GateVerdict(True)
        self.rejected[kind] += 1
        last = self.last_good_time
        hold = last is not None and now - last <= self.hold_time
        return GateVerdict(False, kind, message, hold=hold, stop=not hold)


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
    vmax = _velocity_bounds(model, 1.0)
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
