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

"""SampleStamps (manip_dynamics.simulation.sample_stamps): a simulated arm's stamp clock."""

from types import SimpleNamespace

import pytest

from manip_dynamics.simulation.sample_stamps import SampleStamps

RATE = 1000.0


def arm(elapsed: int, steps: int) -> SimpleNamespace:
    """What SampleStamps reads of an ArmDriver: its elapsed steps and its simulator's."""
    return SimpleNamespace(elapsed_steps=elapsed, sim=SimpleNamespace(steps=steps))


def test_simulated_clock_stamps_are_simulated_time() -> None:
    stamps = SampleStamps(RATE, simulated_clock=True)
    assert stamps.at(arm(5000, 2500), 2500) == pytest.approx(2.5)


def test_anchored_stamps_keep_simulated_spacing_and_never_go_back() -> None:
    stamps = SampleStamps(RATE, simulated_clock=False)
    stamps.anchor(100.0, arm(0, 0))
    assert stamps.publish(arm(250, 250)) == pytest.approx(100.25)
    # the loop waited 1 s of wall time for commands: 10 more steps are 10 ms later, not 1 s
    assert stamps.publish(arm(260, 260)) == pytest.approx(100.26)
    # after a reset (the simulator's count back to 0) the elapsed count goes on
    assert stamps.at(arm(300, 40), 40) == pytest.approx(100.3)
    # re-anchored (un-pause) at a ROS time before the newest stamp: never back
    stamps.anchor(100.1, arm(260, 260))
    assert stamps.at(arm(260, 260), 260) == pytest.approx(100.26)
    # later: the stamps jump to the ROS time then
    stamps.anchor(105.0, arm(260, 260))
    assert stamps.at(arm(261, 261), 261) == pytest.approx(105.001)
