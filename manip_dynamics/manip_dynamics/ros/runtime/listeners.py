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
Whether anyone listens to a publisher, asked of the ROS graph a few times a second only.

A node that builds an optional output per joint state (the observer's external torques and
wrench, the controller's tracking error) skips it when nobody subscribes. Asking rclpy
(``Publisher.get_subscription_count``) costs about 30 us, a tenth of such a node's work per
1 kHz message, so the answer is kept for ``period`` seconds: a new subscriber gets the
output from at most that long after it matched. No rclpy import: it takes any object with
``get_subscription_count()``.
"""

import time
from typing import Any

#: How long [s] an answer is kept.
LISTENER_CHECK_PERIOD = 0.25


class ListenerCheck:
    """Called: whether ``publisher`` has a subscriber, re-asked every ``period`` s."""

    def __init__(self, publisher: Any, period: float = LISTENER_CHECK_PERIOD) -> None:
        """
        Ask ``publisher`` at the first call, then every ``period`` seconds.

        :param publisher: An rclpy publisher (anything with ``get_subscription_count()``).
        :param period: How long an answer is kept [s] (wall clock, monotonic).
        """
        self.publisher = publisher
        self.period = float(period)
        self._listened = False
        self._next = float('-inf')

    def __call__(self) -> bool:
        """Return whether the publisher had at least one subscriber when last asked."""
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.period
            self._listened = self.publisher.get_subscription_count() > 0
        return self._listened
