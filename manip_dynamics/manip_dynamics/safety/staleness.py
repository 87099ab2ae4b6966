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
"""
from __future__ import annotations


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
