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
The effort commands an arm was given, paired with its joint states by reception time.

For an arm that reports no joint torque the observer takes the applied torque from the
commands it was sent. :class:`CommandHistory` keeps them with the time each was received and
answers, for a joint state received at some time, the command that was in force then.
"""

import collections

import numpy as np
from numpy.typing import NDArray

from manip_dynamics.errors import InputError

#: Commands kept by default (2 s at 1 kHz).
DEFAULT_HISTORY = 2000


class CommandUnavailable(InputError):
    """No usable command for a joint state; ``kind`` names the problem for throttled logs."""

    def __init__(self, kind: str, message: str) -> None:
        """Keep the kind ('command missing' or 'command stale') beside the message."""
        super().__init__(message)
        self.kind = kind


class CommandHistory:
    """
    Effort commands with their reception times, oldest first, and the one in force at a time.

    Pairing by reception time keeps the pairs right when the caller processes its queue late:
    the command in force when the joint state arrived, not the newest one. With ``delay`` the
    command is the one received that long before the joint state: behind a
    controller_manager a command acts one to two cycles after it is sent, and pairing it with
    an earlier state shows a fast torque change (a trajectory's start) as an external torque.
    """

    def __init__(self, max_age: float, delay: float = 0.0,
                 length: int = DEFAULT_HISTORY) -> None:
        """
        Keep up to ``length`` commands.

        :param max_age: Oldest usable command at the pairing time [s].
        :param delay: How long before the joint state the paired command was received [s].
        :param length: Commands kept.
        """
        self.max_age = float(max_age)
        self.delay = float(delay)
        self._commands: collections.deque = collections.deque(maxlen=length)

    def add(self, received_ns: int, tau: NDArray[np.float64]) -> None:
        """Keep a command (model order, N m or N) received at ``received_ns`` [ns]."""
        self._commands.append((int(received_ns), tau))

    def at(self, received_ns: int, source: str) -> NDArray[np.float64]:
        """
        Return the command in force ``delay`` before ``received_ns`` [ns].

        :param source: Where the commands come from (a topic name), for the message.
        :raises CommandUnavailable: None received before then, or the last one older than
            ``max_age``.
        """
        when = int(received_ns) - int(self.delay * 1e9)
        for stamp, tau in reversed(self._commands):
            if stamp <= when:
                if (when - stamp) * 1e-9 > self.max_age:
                    raise CommandUnavailable('command stale', 'the last command on %s is '
                                             'older than %g s' % (source, self.max_age))
                return tau
        raise CommandUnavailable('command missing', 'no effort command on %s before this '
                                 'joint state' % source)
