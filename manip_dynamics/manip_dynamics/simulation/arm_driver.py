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
What a torque-controlled arm's driver does around the simulated dynamics; no ROS imports.

:class:`ArmDriver` wraps a :class:`~manip_dynamics.simulation.Simulator` the way the
simulator node presents it as an arm:

* **Commands** per joint, model order; each reception is timed on the wall clock and in
  simulated time.
* **Brakes** hold every joint until a command releases them (``brake_release``
  ``first_command``: any; ``holding_command``: one that holds the braked pose, at most
  ``RESET_HOLD_ACCELERATION`` at rest there, or ``RESET_RELEASE_WAIT`` s of others; after
  :meth:`ArmDriver.reset` or a protective stop always the latter rule).
* **Stale commands** (older than ``command_timeout`` on both clocks,
  :func:`manip_dynamics.safety.staleness.stale_on_both_clocks`): ``command_timeout_action``
  ``brake`` = a protective stop, every joint braked where it is; ``zero`` = zero effort on
  the stale joints.
* **The schedule**: :meth:`ArmDriver.tick` runs the steps owed to the wall clock
  (``elapsed * rate * real_time_factor``), at most ``MAX_BACKLOG`` (and half a command
  timeout) behind, in chunks of one publish period with a sample after each; with
  ``lockstep`` one publish period per command received since the last sample and never
  faster than real time; with ``real_time_factor`` 0 as fast as possible, a few ms of wall
  time per tick.

One clock: the simulator's step count (``Simulator.steps``; braked steps pass with
:meth:`Simulator.hold`). The wall clock is read only through the ``now`` the caller passes
(the node passes ``time.monotonic()``), so every rule here is tested without sleeping.
"""

from collections.abc import Callable
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import InputError
from manip_dynamics.safety.staleness import stale_on_both_clocks
from manip_dynamics.simulation.simulator import Simulator
from manip_dynamics.small_arrays import any_true

FloatArray = NDArray[np.float64]

#: ``brake_release`` values: ``holding_command`` is for a simulator behind ros2_control,
#: whose hardware interface sends zero efforts until a controller writes its commands.
BRAKE_RELEASES = ('first_command', 'holding_command')
#: ``command_timeout_action`` values: a protective stop with the brakes, or zero effort.
TIMEOUT_ACTIONS = ('brake', 'zero')
#: After a reset, commands that keep coming for this long release the brakes even when they
#: do not hold the reset pose [s].
RESET_RELEASE_WAIT = 0.5
#: A command holds the braked pose when the joint accelerations it gives at rest there are at
#: most this large [rad/s^2 or m/s^2]. A command computed from a state before a reset, still
#: in flight, does not; applied, it gave the arm a velocity that a pure gravity compensation
#: then kept.
RESET_HOLD_ACCELERATION = 1e-2
#: Largest backlog caught up when the loop falls behind the wall clock [s of wall time].
MAX_BACKLOG = 0.1
#: Wall-clock budget of one tick when running as fast as possible [s].
FAST_TICK_BUDGET = 0.005
#: Simulated time starts (and restarts on a reset) one step after 0, the start pose held for
#: that step: a zero stamp means "not stamped" to ROS tools, and the first sample must not
#: carry one.
FIRST_STEP = 1

#: ``report(level, text, kind)``: level 'info', 'warning' or 'error'; ``kind`` names a kind
#: of message to throttle (None: always report).
Report = Callable[[str, str, 'str | None'], None]


class RejectedCommand(ValueError):
    """A command message that cannot be applied; ``kind`` names the problem (for throttling)."""

    def __init__(self, text: str, kind: str) -> None:
        super().__init__(text)
        self.kind = kind


def efforts_in_order(values: list[float], names: list[str], source: str) -> FloatArray:
    """
    Check an effort array given in the order ``names`` (JointGroupEffortController's contract).

    :param values: One effort per name [N m or N].
    :param names: The commanded joints, in the array's order.
    :param source: Where it came from, for the message (e.g. the topic).
    :return: The efforts, shape (len(names),), finite.
    :raises RejectedCommand: Wrong length or NaN/inf.
    """
    array = np.asarray(values, dtype=np.float64)
    if array.shape != (len(names),):
        raise RejectedCommand('%s carries %d values, expected %d (command_joints: %s)' % (
            source, array.size, len(names), ', '.join(names)), 'array length')
    bad = ~np.isfinite(array)
    if bad.any():
        raise RejectedCommand('%s has NaN/inf for %s' % (
            source, ', '.join(n for n, b in zip(names, bad) if b)), 'array non-finite')
    return array


def efforts_by_name(model, names: list[str], values: list[float],
                    source: str) -> tuple[list[int], FloatArray]:
    """
    Check name-keyed efforts (topic_based_ros2_control TopicBasedSystem's contract).

    :param model: The simulated :class:`~manip_dynamics.RobotModel`.
    :param names: Joint names, each once, of the model.
    :param values: One effort per name [N m or N].
    :param source: Where it came from, for the message.
    :return: The joints' model indices and their efforts, finite.
    :raises RejectedCommand: Lengths differ, an unknown or repeated joint, NaN/inf.
    """
    array = np.asarray(values, dtype=np.float64)
    if not names or array.shape != (len(names),):
        raise RejectedCommand('%s has %d names and %d efforts' % (
            source, len(names), array.size), 'joint_commands length')
    unknown = [n for n in names if n not in model.joint_names]
    if unknown:
        raise RejectedCommand('%s names unknown joints %s' % (source, unknown),
                              'joint_commands unknown')
    if len(set(names)) != len(names):
        raise RejectedCommand('%s names a joint twice: %s' % (source, names),
                              'joint_commands duplicate')
    bad = ~np.isfinite(array)
    if bad.any():
        raise RejectedCommand('%s has NaN/inf for %s' % (
            source, ', '.join(n for n, b in zip(names, bad) if b)), 'joint_commands non-finite')
    return [model.joint_index(n) for n in names], array


def checked_start(model, command_joints: list[str] | None,
                  initial_positions: list[float] | None) -> tuple[
                      list[str], NDArray[np.int64], FloatArray | None]:
    """
    Check the commanded joints and the start pose a driver is given for ``model``.

    :param command_joints: The joints of array commands, in their order; empty or None = all.
    :param initial_positions: The start pose, model order; empty or None = the caller's
        default.
    :return: The joint names, their model indices, and the pose (None when not given).
    :raises InputError: An unknown or repeated joint, or a pose of the wrong length or not
        finite.
    """
    names = list(command_joints or []) or list(model.joint_names)
    index = np.array([model.joint_index(name) for name in names], dtype=np.int64)
    if len(set(names)) != len(names):
        raise InputError('command_joints lists a joint twice: %s' % names)
    if not initial_positions:
        return names, index, None
    q0 = np.array(initial_positions, dtype=np.float64)
    if q0.shape != (model.dof,) or not np.all(np.isfinite(q0)):
        raise InputError('initial_positions must be %d finite values in the order %s, got %s'
                         % (model.dof, list(model.joint_names), list(initial_positions)))
    return names, index, q0


@dataclass(frozen=True)
class DriverSettings:
    """How the driver runs the arm: the simulator node's parameters of the same names."""

    publish_rate: float            # samples per simulated second [Hz]
    real_time_factor: float        # simulated s per wall s; 0 = as fast as possible
    command_timeout: float         # [s], > 0
    command_timeout_action: str    # TIMEOUT_ACTIONS
    brakes: bool                   # braked until a command releases them
    brake_release: str             # BRAKE_RELEASES
    lockstep: bool


class ArmDriver:
    """The simulated arm as its driver presents it (module docstring)."""

    def __init__(self, sim: Simulator, settings: DriverSettings, report: Report,
                 now: float, paused: bool = False) -> None:
        """
        Take the simulator (at its start pose) and start the clock one step in.

        :param sim: The simulator, at rest at its initial state.
        :param settings: The driver's settings.
        :param report: Where log lines go (see :data:`Report`).
        :param now: The wall clock [s] (monotonic).
        :param paused: Start paused (:meth:`pause`).
        """
        self.sim = sim
        self.settings = settings
        self._report = report
        model = sim.model
        n = model.dof
        self.rate = 1.0 / sim.dt
        self.steps_per_publish = max(1, int(round(self.rate / settings.publish_rate)))
        self.command = np.zeros(n)
        self._received_wall = np.full(n, -math.inf)
        self._received_sim = np.full(n, -math.inf)
        self._stale_reported = np.zeros(n, dtype=bool)
        self.command_count = 0
        self._count_at_sample = 0
        self.paused = bool(paused)
        self.failed = False           # paused by an integration error: reset() resumes
        self.braked = bool(settings.brakes)
        self.protective_stop = False
        self._reset_wall: float | None = None   # a reset's brakes wait for a holding command
        self.brake_q = sim.q
        #: Steps taken since the start, never going back (reset or not): the samples' stamps.
        self.elapsed_steps = 0
        sim.hold(FIRST_STEP)
        self._until_publish = self.steps_per_publish
        self.restart_schedule(now)

    # ------------------------------------------------------------------ state
    def describe(self) -> str:
        """Return what holds the arm now, for a log line ('' when it runs free)."""
        return '%s%s' % (' (paused)' if self.paused else '', '' if not self.braked else
                         ', brakes on until the first command'
                         if self.settings.brake_release == 'first_command'
                         and not self.protective_stop
                         else ', brakes on until a command that holds the pose')

    @property
    def t(self) -> float:
        """Return the simulated time [s] (the simulator's)."""
        return self.sim.t

    @property
    def commanded(self) -> NDArray[np.bool_]:
        """Return which joints have received a command, shape (n,)."""
        return np.isfinite(self._received_wall)

    def restart_schedule(self, now: float) -> None:
        """Re-anchor the wall-clock schedule at the current step (start, un-pause, release)."""
        self._anchor_wall = now
        self._anchor_steps = self.sim.steps

    def note_sample(self) -> None:
        """Note that a sample was published now (lockstep waits for a command after it)."""
        self._count_at_sample = self.command_count

    # ------------------------------------------------------------------ commands
    def take_command(self, index: NDArray[np.int64] | list[int], values: FloatArray,
                     source: str, now: float) -> None:
        """
        Store checked efforts for the joints ``index`` (model order); release the brakes if due.

        :param index: Model indices of the commanded joints.
        :param values: Their efforts [N m or N], finite, same length.
        :param source: Where the command came from (for the log).
        :param now: The wall clock [s].
        """
        self.command[index] = values
        self.command_count += 1
        self._received_wall[index] = now
        self._received_sim[index] = self.sim.t
        if self.braked:
            self._release(source, now)

    def _release(self, source: str, now: float) -> None:
        """Release the brakes when the rules of the module docstring allow it."""
        how = 'first command arrived on %s' % source
        holding_only = (self.settings.brake_release == 'holding_command'
                        or self.protective_stop)
        if self._reset_wall is not None or holding_only:
            acc = self.braked_pose_acceleration()
            if acc > RESET_HOLD_ACCELERATION and self._reset_wall is None:
                if not np.any(self.command):
                    # what a ros2_control hardware interface sends before any controller
                    # has written its command interfaces
                    self._report('info', 'brakes stay on: all-zero commands on %s would '
                                 'accelerate the held pose at %.3g rad/s^2 (no controller '
                                 'has written yet?)' % (source, acc), 'reset release')
                    return
                self._reset_wall = now   # the wait starts at the first real command
            waited = now - self._reset_wall if self._reset_wall else 0.0
            after = ('after the protective stop' if self.protective_stop else
                     'after the reset' if not holding_only else
                     '(brake_release holding_command)')
            if acc > RESET_HOLD_ACCELERATION and waited < RESET_RELEASE_WAIT:
                self._report('info', 'brakes stay on %s: the command on %s would accelerate '
                             'the %s pose at %.3g rad/s^2 (computed from another state?); '
                             'waiting for one that holds it (at most %g s)' % (
                                 after, source, 'held' if holding_only else 'reset', acc,
                                 RESET_RELEASE_WAIT), 'reset release')
                return
            how = ('command on %s holds the %s pose' % (source, 'held' if holding_only
                                                        else 'reset')
                   if acc <= RESET_HOLD_ACCELERATION
                   else 'commands on %s kept coming for %.2f s without holding the pose '
                   '(%.3g rad/s^2)' % (source, waited, acc))
        self.braked = False
        self.protective_stop = False
        self._reset_wall = None
        self.restart_schedule(now)
        self._report('info', 'brakes released at t = %.4f s: %s' % (self.sim.t, how), None)

    def braked_pose_acceleration(self) -> float:
        """Return the largest joint acceleration the command gives at rest at the braked pose."""
        model = self.sim.model
        tau = self.command
        if self.sim.clamp_effort:   # the torque the simulator would apply
            limit = model.effort_limits
            tau = np.clip(tau, -limit, limit)
        try:
            qdd = model.forward_dynamics(self.brake_q, np.zeros(model.dof), tau,
                                         include_armature=True)
        except ValueError:
            return math.inf
        return float(np.max(np.abs(qdd))) if qdd.size else 0.0

    # ------------------------------------------------------------------ services
    def reset(self, now: float) -> bool:
        """
        Back to the initial pose at rest at the first step, brakes on; commands are kept.

        Commands keep their age (they still time out): a running controller keeps driving.

        :param now: The wall clock [s].
        :return: Whether it recovered from an integration failure (and runs again).
        :raises InputError: What :meth:`Simulator.reset` raises (nothing changed then).
        """
        before = self.sim.t
        self.sim.reset()
        self.sim.set_external_wrenches(None)
        self.sim.hold(FIRST_STEP)
        self._received_sim -= before - self.sim.t
        recovered = self.failed
        if recovered:
            self.failed = False
            self.paused = False
        self._until_publish = self.steps_per_publish
        self.restart_schedule(now)
        self.braked = bool(self.settings.brakes)
        self.brake_q = self.sim.q
        self.protective_stop = False
        self._reset_wall = now if self.braked else None
        return recovered

    def pause(self, paused: bool, now: float) -> None:
        """Pause (no steps, no samples) or resume; resuming clears an integration failure."""
        if not paused and self.paused:
            self.restart_schedule(now)
        self.paused = bool(paused)
        if not self.paused:
            self.failed = False

    # ------------------------------------------------------------------ stale commands
    def _effort(self, now: float) -> FloatArray | None:
        """
        Return the efforts to apply, model order; act on stale commands.

        ``brake``: a protective stop (None: nothing to apply); ``zero``: zero effort where
        the command is stale.
        """
        s = self.settings
        stale = stale_on_both_clocks(now, self._received_wall, self.sim.t, self._received_sim,
                                     s.command_timeout)
        if not (any_true(stale) or any_true(self._stale_reported)):
            return self.command.copy()   # every joint's command fresh (the common case)
        commanded = self.commanded
        if s.command_timeout_action == 'brake' and any_true(stale & commanded):
            self._protective(stale & commanded)
            return None
        self._report_stale(stale)
        return np.where(stale, 0.0, self.command)

    def _protective(self, stale: NDArray[np.bool_]) -> None:
        """Brake every joint where it is: a driver's protective stop on a dead controller."""
        self.sim.hold()
        self.brake_q = self.sim.q
        self.braked = True
        self.protective_stop = True
        self._reset_wall = None
        names = self.sim.model.joint_names
        self._report('error', 'protective stop at t = %.3f s: no command for %s within '
                     'command_timeout %g s; brakes on where the arm is, released by ~/reset or '
                     'by a command that holds this pose' % (
                         self.sim.t, [names[i] for i in np.flatnonzero(stale)],
                         self.settings.command_timeout), None)

    def _report_stale(self, stale: NDArray[np.bool_]) -> None:
        """Report when commanded joints go stale (zero effort) and when commands come back."""
        commanded = self.commanded
        newly = stale & commanded & ~self._stale_reported
        back = ~stale & self._stale_reported
        if not (newly.any() or back.any()):
            return
        names = self.sim.model.joint_names
        if newly.any():
            self._report('warning', 'no command for %s within command_timeout %g s: applying '
                         'zero effort (t = %.3f s)' % (
                             [names[i] for i in np.flatnonzero(newly)],
                             self.settings.command_timeout, self.sim.t), None)
        if back.any():
            self._report('info', 'commands are back for %s (t = %.3f s)' % (
                [names[i] for i in np.flatnonzero(back)], self.sim.t), None)
        self._stale_reported = (self._stale_reported | newly) & ~back

    # ------------------------------------------------------------------ the schedule
    @property
    def lockstepping(self) -> bool:
        """Return whether lockstep applies now (commands flow and the brakes are off)."""
        return self.settings.lockstep and not self.braked and any_true(self.commanded)

    def _lockstep_waits(self, now: float) -> bool:
        """
        Return whether lockstep holds the simulation for a command (and check its age).

        No command since the last sample: wait; none at all for ``command_timeout`` (wall
        clock): the ``command_timeout_action`` (a protective stop, or zero effort: then it
        runs on).
        """
        if not self.lockstepping or self.command_count != self._count_at_sample:
            return False
        commanded = self.commanded
        stale = commanded & ((now - self._received_wall) > self.settings.command_timeout)
        if not stale.any():
            return True
        if self.settings.command_timeout_action == 'brake':
            self._protective(stale)
            return False
        self._report_stale(stale)
        return False

    def _owed(self, now: float, lockstep: bool) -> int:
        """Return the steps to run in this tick (-1: as many as the tick's budget allows)."""
        s = self.settings
        rtf = s.real_time_factor
        steps = self.sim.steps
        if rtf > 0.0:
            owed = (self._anchor_steps + int((now - self._anchor_wall) * self.rate * rtf)
                    - steps)
            if lockstep:
                if owed < self._until_publish:
                    return 0   # not faster than real_time_factor
                if owed > self._until_publish + self.steps_per_publish:
                    # behind (a late command): simulated time waits for the controller
                    self._anchor_wall = now
                    self._anchor_steps = steps + self._until_publish
                return self._until_publish
            # Catch up at most half a command timeout of simulated time in one tick: a
            # controller cannot answer during a tick, and its commands must not go stale.
            backlog = max(self.steps_per_publish, int(min(
                MAX_BACKLOG * rtf, 0.5 * s.command_timeout) * self.rate))
            if owed > backlog:
                self._report('warning', 'cannot keep up with real_time_factor %g: dropping '
                             '%.3f s of simulated time' % (rtf, (owed - backlog) / self.rate),
                             'cannot keep up')
                self._anchor_wall = now
                self._anchor_steps = steps + backlog
                owed = backlog
            return owed
        return self._until_publish if lockstep else -1

    def tick(self, now: float, before_chunk: Callable[[Simulator, int, int], int],
             sample: Callable[[], None], clock: Callable[[], float]) -> None:
        """
        Run the steps owed now (module docstring), calling ``sample`` after each publish period.

        An integration error pauses the driver (:attr:`failed`) and is reported; ``reset``
        resumes.

        :param now: The wall clock at the tick [s].
        :param before_chunk: ``(sim, steps, chunk) -> chunk``: put the external wrenches on
            for the chunk starting at step ``steps``, shortened where a push starts or ends.
        :param sample: Publish the current state (called with the state after the period).
        :param clock: The wall clock, read for the budget of an as-fast-as-possible tick.
        """
        sim = self.sim
        if self.paused:
            return
        lockstep = self.lockstepping   # as it was when the tick began
        if self._lockstep_waits(now):
            return
        owed = self._owed(now, lockstep)
        while owed != 0:
            chunk = self._until_publish if owed < 0 else min(owed, self._until_publish)
            chunk = before_chunk(sim, sim.steps, chunk)
            effort = None if self.braked else self._effort(now)
            if effort is None:
                sim.hold(chunk)   # braked: the arm holds its pose while time goes on
            elif not self._step(effort, chunk):
                return
            self.elapsed_steps += chunk
            self._until_publish -= chunk
            if owed > 0:
                owed -= chunk
            if self._until_publish == 0:
                self._until_publish = self.steps_per_publish
                self.note_sample()
                sample()
            if owed < 0 and clock() - now > FAST_TICK_BUDGET:
                break

    def _step(self, effort: FloatArray, chunk: int) -> bool:
        """Step the simulator; on an integration error pause, report and return False."""
        try:
            self.sim.step(effort, steps=chunk)
            return True
        except Exception as err:  # noqa: B902 - pause, report, and let reset() recover
            self.paused = True
            self.failed = True
            self._report('error', 'simulation paused after an integration error at t = %.4f '
                         's: %s (call ~/reset)' % (self.sim.t, err), None)
            return False
