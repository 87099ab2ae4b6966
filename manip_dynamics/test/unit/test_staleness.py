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

"""StaleInputWatchdog: no stale verdict on the tick right after the process slept, never two."""
import pytest

from manip_dynamics.safety.staleness import StaleInputWatchdog


def test_input_that_stopped_is_stale_after_the_timeout():
    watchdog = StaleInputWatchdog(timeout=0.5, period=0.1)
    verdicts = [watchdog.stale_age(0.1 * k, 0.0) for k in range(1, 8)]
    assert verdicts[:5] == [None] * 5          # ages 0.1 .. 0.5: not older than the timeout
    assert verdicts[5] == pytest.approx(0.6)
    assert verdicts[6] == pytest.approx(0.7)


def test_a_tick_after_the_process_slept_gives_no_verdict_the_next_one_does():
    watchdog = StaleInputWatchdog(timeout=0.5, period=0.1)
    assert watchdog.stale_age(1.0, 0.99) is None
    # the process slept 1.15 s: the queue may hold newer samples; no verdict on this tick
    assert watchdog.stale_age(2.15, 0.99) is None
    assert watchdog.withheld == 1
    # one period later, the queue was served: a sample received at 2.16 -> not stale
    assert watchdog.stale_age(2.25, 2.16) is None
    # ... or no sample came: stale now
    other = StaleInputWatchdog(timeout=0.5, period=0.1)
    other.stale_age(1.0, 0.99)
    other.stale_age(2.15, 0.99)
    assert other.stale_age(2.25, 0.99) == pytest.approx(1.26)


def test_a_starved_process_still_declares_stale_input():
    watchdog = StaleInputWatchdog(timeout=0.5, period=0.1)
    # every tick comes 1 s after the previous one: at most every other tick is withheld
    verdicts = [watchdog.stale_age(float(k), 0.0) for k in range(1, 6)]
    assert verdicts[0] is not None             # first tick: nothing to compare with
    assert sum(v is not None for v in verdicts) >= 3
    assert not any(a is None and b is None for a, b in zip(verdicts[1:], verdicts[2:]))
