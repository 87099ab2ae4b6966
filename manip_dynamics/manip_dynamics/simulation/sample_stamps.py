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
The stamps a simulated arm's samples carry [s].

With /clock (``simulated_clock``) a sample is stamped with its simulated time. Without, it
is stamped with the ROS time of the last anchor plus the simulated time since (re-anchored
at start, un-pause and a new model, never back), so the stamps keep the simulated time's
spacing: a loop in lockstep waits for late commands and its stamps fall behind the ROS
clock (up to 2 s behind the real controller_manager on a loaded machine,
docs/ROS2_CONTROL.md). No ROS imports: the node passes the ROS time in.
"""

from manip_dynamics.simulation.arm_driver import ArmDriver


class SampleStamps:
    """The stamp clock of one simulator node's samples (module docstring)."""

    def __init__(self, rate: float, simulated_clock: bool) -> None:
        """
        Start with the stamps anchored at ROS time 0 (:meth:`anchor` before publishing).

        :param rate: The simulator's integration rate [Hz].
        :param simulated_clock: Stamps are simulated time (the node publishes /clock).
        """
        self.rate = float(rate)
        self.simulated_clock = simulated_clock
        self._base = 0.0      # ROS time at the anchor [s]
        self._anchor = 0      # the driver's elapsed steps then
        self.last = 0.0       # the newest stamp published [s]

    def anchor(self, now: float, arm: ArmDriver) -> None:
        """Anchor the stamps at ROS time ``now`` [s] and the driver's step; never back."""
        self._base = max(now, self.last)
        self._anchor = arm.elapsed_steps

    def at(self, arm: ArmDriver, steps: int) -> float:
        """Return the stamp [s] of the state after ``steps`` steps of ``arm.sim``."""
        if self.simulated_clock:
            return steps / self.rate
        return self._base + (arm.elapsed_steps - self._anchor + steps - arm.sim.steps) / self.rate

    def publish(self, arm: ArmDriver) -> float:
        """Return the stamp of the current state, remembered as the newest one [s]."""
        self.last = self.at(arm, arm.sim.steps)
        return self.last
