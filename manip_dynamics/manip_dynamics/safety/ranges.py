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
Valid ranges of settings: one check, one message format, for the library and the nodes.

A rate, a timeout or a limit outside its range is refused with a message that names the
setting, the range and the value; the ranges themselves are documented in docs/ROS_API.md.
"""

import math
from typing import NamedTuple

from manip_dynamics.errors import InputError


class Range(NamedTuple):
    """A closed or half-open interval of valid values."""

    low: float
    high: float
    low_open: bool = False

    def text(self) -> str:
        """Return the interval as ``[low, high]`` or ``(low, high]``."""
        return '%s%g, %g]' % ('(' if self.low_open else '[', self.low, self.high)

    def contains(self, value: float) -> bool:
        """Return whether ``value`` is finite and inside the interval."""
        return (math.isfinite(value) and self.low <= value <= self.high
                and not (self.low_open and value == self.low))


def check_range(name: str, value: object, valid: Range, unit: str = '') -> float:
    """
    Return ``value`` as a float when it is a finite number inside ``valid``.

    :param name: The setting's name, for the message (e.g. ``'watchdog_rate'``).
    :param value: The value to check (bool is not a number here).
    :param valid: The valid interval.
    :param unit: Unit shown after the interval, e.g. ``'Hz'``.
    :return: ``float(value)``.
    :raises InputError: Not a number, NaN/inf, or outside the interval.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError('%s must be a number, got %r' % (name, value))
    number = float(value)
    if not valid.contains(number):
        raise InputError('%s must be in %s%s, got %r' % (
            name, valid.text(), ' ' + unit if unit else '', value))
    return number
