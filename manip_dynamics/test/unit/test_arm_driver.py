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
ArmDriver: brakes, protective stop, stale commands and the schedule, without ROS or sleeping.

The wall clock is a number the test moves. References are physical (gravity torques hold a
pose: zero acceleration at rest; zero effort lets the arm fall; braked joints do not move)
and the rules of the driver's documentation (ages on two clocks, backlog, lockstep).
"""

import math

import numpy as np
import pytest

from manip_dynamics import InputError, RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.simulation import ArmDriver, DriverSettings, Simulator
from manip_dynamics.simulation.arm_driver import (
    checked_start, efforts_by_name, efforts_in_order, FIRST_STEP, MAX_BACKLOG, RejectedCommand,
    RESET_RELEASE_WAIT)

POSE = np.array([0.3, -0.4, 0.2, -1.9, 0.1, 1.9, 0.5])


@pytest.fixture(scope='module')
def cobot():
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


class Arm:
    """A driver on a fake wall clock, recording what it reports and samples."""

    def __init__(self, model, **overrides):
        settings = {'publish_rate': 250.0, 'real_time_factor': 1.0, 'command_timeout': 0.1,
                    'command_timeout_action': 'brake', 'brakes': True,
                    'brake_release': 'first_command', 'lockstep': False}
        settings.update(overrides)
        self.now = 100.0
        self.lines = []
        self.samples = []
        self.sim = Simulator(model, POSE, dt=1e-3)
        self.driver = ArmDriver(self.sim, DriverSettings(**settings),
                                lambda level, text, kind: self.lines.append((level, text)),
                                self.now)

    def run(self, seconds: float, command=None, every: float = 0.004) -> None:
        """Let ``seconds`` of wall time pass in ticks of ``every``, commanding each tick."""
        for _ in range(int(round(seconds / every))):
            self.now += every
            if command is not None:
                self.driver.take_command(np.arange(7), command(self.sim), 'test', self.now)
            self.driver.tick(self.now, lambda sim, steps, chunk: chunk,
                             lambda: self.samples.append(self.sim.t), lambda: self.now)

    def said(self, words: str) -> bool:
        return any(words in text for _, text in self.lines)


def gravity(sim):
    return sim.model.gravity_torques(sim.q)


def test_one_clock_starts_one_step_in_and_braked_time_goes_on(cobot):
    arm = Arm(cobot)
    assert arm.sim.steps == FIRST_STEP and arm.driver.braked
    arm.run(0.2)
    # 0.2 s of wall time at real time: 200 steps, the arm held, a sample every 4 steps
    assert arm.sim.steps == FIRST_STEP + 200
    np.testing.assert_array_equal(arm.sim.q, POSE)
    assert len(arm.samples) == 50 and arm.samples[-1] == arm.sim.t


def test_first_command_releases_and_zero_effort_lets_the_arm_fall(cobot):
    arm = Arm(cobot)
    arm.run(0.1, command=lambda sim: np.zeros(7))
    assert not arm.driver.braked and arm.said('brakes released')
    assert np.max(np.abs(arm.sim.q - POSE)) > 1e-3   # nothing holds it up


def test_holding_command_release_needs_a_command_that_holds_the_pose(cobot):
    arm = Arm(cobot, brake_release='holding_command')
    arm.run(0.05, command=lambda sim: np.zeros(7))
    assert arm.driver.braked and arm.said('all-zero commands')
    half = lambda sim: 0.5 * gravity(sim)  # noqa: E731 - accelerates the held pose
    arm.run(0.05, command=half)
    assert arm.driver.braked and arm.said('brakes stay on')
    arm.run(0.05, command=gravity)
    assert not arm.driver.braked and arm.said('holds the held pose')
    np.testing.assert_allclose(arm.sim.q, POSE, atol=1e-6)


def test_stale_commands_make_a_protective_stop_released_by_a_holding_command(cobot):
    arm = Arm(cobot)
    arm.run(0.1, command=gravity)
    assert not arm.driver.braked
    arm.run(0.2)   # the controller died
    assert arm.driver.protective_stop and arm.driver.braked
    assert arm.said('protective stop') and ('error', ) == arm.lines[-1][:1]
    stopped = arm.sim.q
    np.testing.assert_array_equal(arm.sim.qd, 0.0)
    arm.run(0.1)
    np.testing.assert_array_equal(arm.sim.q, stopped)     # braked where it stopped
    arm.run(0.02, command=lambda sim: np.zeros(7))        # does not hold: brakes stay
    assert arm.driver.braked
    arm.run(0.02, command=gravity)
    assert not arm.driver.braked and not arm.driver.protective_stop


def test_a_command_is_stale_only_when_old_on_both_clocks(cobot):
    # as fast as possible: 0.5 s of simulated time pass in one wall-clock millisecond
    arm = Arm(cobot, real_time_factor=0.0)
    arm.driver.take_command(np.arange(7), gravity(arm.sim), 'test', arm.now)
    start = arm.sim.t
    while arm.sim.t - start < 0.5:   # each tick's budget is spent after one chunk
        arm.driver.tick(arm.now, lambda sim, steps, chunk: chunk, lambda: None,
                        lambda: arm.now + 1.0)
    assert not arm.driver.braked, 'a live controller (wall clock fresh) was dropped'
    # a stalled simulator: the wall clock moved on, simulated time did not
    arm = Arm(cobot)
    arm.run(0.02, command=gravity)
    arm.now += 1.0
    arm.driver.restart_schedule(arm.now)   # no steps owed for the stall itself
    arm.run(0.004)
    assert not arm.driver.braked, 'a stalled simulator dropped a live controller'


def test_zero_action_applies_zero_effort_to_stale_joints_and_reports_their_return(cobot):
    arm = Arm(cobot, command_timeout_action='zero')
    arm.run(0.1, command=gravity)
    arm.run(0.2)
    assert not arm.driver.braked and arm.said('applying zero effort')
    np.testing.assert_array_equal(arm.sim.applied_effort, 0.0)
    assert np.max(np.abs(arm.sim.q - POSE)) > 1e-3
    arm.run(0.01, command=gravity)
    assert arm.said('commands are back')


def test_a_loop_far_behind_catches_up_at_most_the_backlog(cobot):
    arm = Arm(cobot)
    arm.run(0.02, command=gravity)
    steps = arm.sim.steps
    arm.now += 1.0   # the process slept for a second
    arm.driver.take_command(np.arange(7), gravity(arm.sim), 'test', arm.now)
    arm.driver.tick(arm.now, lambda sim, s, chunk: chunk, lambda: None, lambda: arm.now)
    backlog = int(min(MAX_BACKLOG, 0.5 * 0.1) * 1000)
    assert arm.sim.steps - steps == backlog and arm.said('cannot keep up')


def test_lockstep_waits_for_a_command_after_each_sample(cobot):
    arm = Arm(cobot, lockstep=True)
    arm.run(0.02, command=gravity)                   # released, commands flowing
    samples = len(arm.samples)
    for _ in range(5):                               # ticks with no command: no steps
        arm.now += 0.004
        arm.driver.tick(arm.now, lambda sim, s, chunk: chunk,
                        lambda: arm.samples.append(arm.sim.t), lambda: arm.now)
    assert len(arm.samples) == samples
    arm.driver.take_command(np.arange(7), gravity(arm.sim), 'test', arm.now)
    arm.driver.tick(arm.now, lambda sim, s, chunk: chunk,
                    lambda: arm.samples.append(arm.sim.t), lambda: arm.now)
    assert len(arm.samples) == samples + 1           # one publish period per command
    arm.now += 0.2                                   # the controller stopped answering
    arm.driver.tick(arm.now, lambda sim, s, chunk: chunk, lambda: None, lambda: arm.now)
    assert arm.driver.protective_stop


def test_reset_goes_back_keeps_command_ages_and_recovers_from_a_failure(cobot):
    arm = Arm(cobot)
    arm.run(0.1, command=gravity)
    arm.sim.step = lambda *args, **kwargs: (_ for _ in ()).throw(ValueError('diverged'))
    arm.driver.tick(arm.now + 0.004, lambda sim, s, chunk: chunk, lambda: None,
                    lambda: arm.now)
    del arm.sim.step   # the class's step is back
    assert arm.driver.paused and arm.driver.failed and arm.said('integration error')
    assert arm.driver.reset(arm.now) is True
    assert not arm.driver.paused and arm.driver.braked
    assert arm.sim.steps == FIRST_STEP
    np.testing.assert_array_equal(arm.sim.q, POSE)
    # the last command's age went back with the clock: still fresh, still driving
    arm.run(0.004, command=None)
    assert arm.driver.braked   # a reset's brakes wait for a holding command
    arm.run(RESET_RELEASE_WAIT / 10, command=gravity)
    assert not arm.driver.braked


def test_command_messages_are_checked_with_a_kind_per_problem(cobot):
    names = list(cobot.joint_names)
    np.testing.assert_array_equal(efforts_in_order([1.0] * 7, names, 't'), np.ones(7))
    for values, kind in (([1.0] * 6, 'array length'),
                         ([math.nan] + [0.0] * 6, 'array non-finite')):
        with pytest.raises(RejectedCommand) as error:
            efforts_in_order(values, names, 't')
        assert error.value.kind == kind
    index, values = efforts_by_name(cobot, names[::-1], list(range(7)), 't')
    assert index == list(range(6, -1, -1))
    for args, kind in (((names[:2], [1.0]), 'joint_commands length'),
                       ((['nope'], [1.0]), 'joint_commands unknown'),
                       ((names[:1] * 2, [1.0, 2.0]), 'joint_commands duplicate'),
                       ((names[:1], [math.inf]), 'joint_commands non-finite')):
        with pytest.raises(RejectedCommand) as error:
            efforts_by_name(cobot, *args, 't')
        assert error.value.kind == kind


def test_the_start_is_checked_and_the_warm_up_leaves_no_trace(cobot):
    names = list(cobot.joint_names)
    assert checked_start(cobot, None, None)[0] == names
    chosen, index, q0 = checked_start(cobot, names[2:4], list(POSE))
    assert chosen == names[2:4] and index.tolist() == [2, 3]
    np.testing.assert_array_equal(q0, POSE)
    for joints, pose in ((['nope'], None), (names[:1] * 2, None), (None, [0.0] * 6),
                         (None, [math.nan] * 7)):
        with pytest.raises(InputError):
            checked_start(cobot, joints, pose)
    sim = Simulator(cobot, POSE, np.full(7, 0.1), dt=1e-3)
    sim.warm_up()
    assert sim.steps == 0
    np.testing.assert_array_equal(sim.q, POSE)
    np.testing.assert_array_equal(sim.qd, np.full(7, 0.1))
    arm = Arm(cobot)
    assert arm.driver.describe() == ', brakes on until the first command'
