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
ChainWatch.tracking_rms, the tracking figure of the chain tests and scripts/mujoco_tracking.py.

Driven without a ROS graph: a stand-in node object and joint states written in. The
reference is the plan itself (a quintic, in closed form here): an arm that is the plan
delayed by d has, on the plan's own time base, the error q_d(t - d) - q_d(t).
"""

import numpy as np
import pytest
from ros_test_support import require_interfaces, require_rclpy

require_rclpy()
require_interfaces()

from manip_dynamics.ros.testing.chain_watch import ChainWatch, quintic_plan  # noqa: E402

NAMES = ['a', 'b']
QA = np.array([0.2, -0.1])
QB = np.array([0.8, -0.4])
DURATION = 2.0
START = 10.3
RATE = 250.0


class _Node:
    """What ChainWatch asks of a node: subscriptions, never called here."""

    def create_subscription(self, *args, **kwargs) -> None:
        return None


def _quintic(t: np.ndarray) -> np.ndarray:
    s = np.clip(t / DURATION, 0.0, 1.0)
    return QA + (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5)[:, None] * (QB - QA)


def _watch(delay: float) -> ChainWatch:
    """States at RATE from 10 s to START + DURATION + 1 s: the plan, ``delay`` late."""
    watch = ChainWatch(_Node(), NAMES)
    times = np.arange(10.0, START + DURATION + 1.0, 1.0 / RATE)
    positions = _quintic(times - START - delay)
    watch.states = [(t, q, np.zeros(2)) for t, q in zip(times, positions)]
    return watch


def test_on_the_plans_stamped_start_the_error_is_the_arms_own():
    _, desired = quintic_plan(NAMES, QA, QB, DURATION, points=400)
    exact = _watch(0.0).tracking_rms(10.0, desired, QA, DURATION, start=START)
    assert exact < 2e-4   # the plan's 400 points interpolated linearly
    late = _watch(0.03).tracking_rms(10.0, desired, QA, DURATION, start=START)
    times = np.arange(10.0, START + DURATION + 1.0, 1.0 / RATE)
    inside = times[(times >= START) & (times <= START + DURATION)] - START
    expected = np.sqrt(np.mean((_quintic(inside - 0.03) - _quintic(inside)) ** 2))
    assert late == pytest.approx(expected, rel=0.02, abs=2e-4)
    assert late > 0.005


def test_a_start_read_from_the_motion_measures_a_close_tracker_against_a_late_plan():
    """A quintic leaves its start by 0.1 mrad only ~50 ms in: the arm that is the plan
    reads as tens of mrad off (what the stamped start is for)."""
    _, desired = quintic_plan(NAMES, QA, QB, DURATION, points=400)
    from_motion = _watch(0.0).tracking_rms(10.0, desired, QA, DURATION, 1.0 / RATE)
    assert from_motion > 0.01


def test_an_arm_that_never_moved_is_refused_either_way():
    watch = ChainWatch(_Node(), NAMES)
    watch.states = [(10.0 + k / RATE, QA.copy(), np.zeros(2)) for k in range(1000)]
    _, desired = quintic_plan(NAMES, QA, QB, DURATION)
    for start in (None, START):
        with pytest.raises(AssertionError, match='did not move'):
            watch.tracking_rms(10.0, desired, QA, DURATION, start=start)
