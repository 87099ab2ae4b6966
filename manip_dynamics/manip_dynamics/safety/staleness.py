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
When a watchdog may call its input stale: not on the first tick after its own process slept.

A node whose process was starved (another process on its core, a garbage collection, a
swap-in) wakes with its watchdog timer and its input queue ready at once; rclpy's executor
may run the timer first, which then sees the last sample as old although newer ones wait in
the queue. :class:`StaleInputWatchdog` withholds the verdict on a tick that comes more than
``stall`` after the previous one; the next tick, one period later, judges after the queue
has been served. Never two ticks in a row: input that really stopped is still declared
stale, at most one watchdog period later than without the guard, however starved the
process is.

A simulated arm's commands are judged on two clocks (:func:`stale_on_both_clocks`).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


class StaleInputWatchdog:
    """
    Age of a node's input, judged only on ticks that follow an awake one.

    :param timeout: Input older than this is stale [s].
    :param period: The watchdog's tick period [s]; a gap between two ticks above
        max(``timeout`` / 2, 2 ``period``) means the process itself slept.
    """

    def __init__(self, timeout: float, period: float) -> None:
        self.timeout = float(timeout)
        self.stall = max(self.timeout / 2.0, 2.0 * float(period))
        self._last_tick: float | None = None
        self._withheld_last = False
        #: Ticks whose verdict was withheld because the process had slept before them.
        self.withheld = 0

    def stale_age(self, now: float, last_seen: float | None) -> float | None:
        """
        Return the input's age [s] when it is stale at this tick, else None.

        :param now: This tick's time [s] (the clock of ``last_seen``).
        :param last_seen: When the last sample was received [s], None before the first.
        """
        previous, self._last_tick = self._last_tick, now
        if last_seen is None:
            return None
        slept = previous is not None and now - previous > self.stall
        if slept and not self._withheld_last:
            self._withheld_last = True
            self.withheld += 1
            return None
        self._withheld_last = False
        age = now - last_seen
        return age if age > self.timeout else None


def stale_on_both_clocks(wall_now: float, received_wall: NDArray[np.float64],
                         sim_now: float, received_sim: NDArray[np.float64],
                         timeout: float) -> NDArray[np.bool_]:
    """
    Return which commands are stale for a simulated arm: older than ``timeout`` on both clocks.

    A dead controller stops driving the arm (its last command ages on the wall clock and in
    simulated time alike), while neither a simulator that stalled and catches up (simulated
    time behind) nor one that runs faster than real time (wall time behind) drops a live
    controller's commands.

    :param wall_now: The wall clock now [s] (monotonic).
    :param received_wall: When each joint's command was received, same clock [s], shape
        (n,); -inf = never.
    :param sim_now: Simulated time now [s].
    :param received_sim: Simulated time at each reception [s], shape (n,); -inf = never.
    :param timeout: Largest age [s], > 0.
    :return: Stale joints, shape (n,) (True also for a joint never commanded).
    """
    return ((wall_now - received_wall) > timeout) & ((sim_now - received_sim) > timeout)
