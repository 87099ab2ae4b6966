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
When a node that reads every sample of a batch publishes its outputs (no ROS here).

A node on a :class:`~manip_dynamics.ros.runtime.callback_lane.CallbackLane` takes every
queued sample, oldest first, and publishes once per batch, for the newest. :class:`BatchPacing`
says when it publishes earlier: where the contact flag changes (a flag that rises and falls
within one batch is still seen), and, in a batch that goes on (samples arriving as fast as
they are taken), once per ``period`` of the samples' own time. A batch whose samples span
``behind_span`` of their stamps means the samples arrive faster than the node takes them: the
node should say so. Off the lane (one message at a time) every sample is published.
"""

from typing import NamedTuple


class PaceDecision(NamedTuple):
    """
    What to do with one sample.

    :ivar publish: Publish its outputs now.
    :ivar changed: Its contact flag differs from the last one published.
    :ivar behind: The span [s] of the batch's stamps when it is ``behind_span`` or more and the
        sample is published because the batch goes on; else 0.
    :ivar samples: Samples in the batch so far, this one included.
    """

    publish: bool
    changed: bool
    behind: float
    samples: int


class BatchPacing:
    """The publish decisions of one output stream (stamps in seconds, any clock)."""

    def __init__(self, period: float, behind_span: float) -> None:
        """
        Start with nothing published.

        :param period: Publish at least this often [s of the stamps] within a batch.
        :param behind_span: A batch spanning this much [s] is reported as behind.
        """
        self.period = float(period)
        self.behind_span = float(behind_span)
        self._published_t = -float('inf')
        self._published_contact = False
        self._count = 0
        self._first_t = 0.0

    def sample(self, t: float, contact: bool, one_at_a_time: bool) -> PaceDecision:
        """
        Decide for the sample stamped ``t`` [s] with the contact flag ``contact``.

        :param one_at_a_time: The node takes messages one at a time (no batches): publish.
        """
        self._count += 1
        if self._count == 1:
            self._first_t = t
        changed = contact != self._published_contact
        due = self._count > 1 and t - self._published_t >= self.period
        span = t - self._first_t
        behind = span if due and not one_at_a_time and span >= self.behind_span else 0.0
        return PaceDecision(one_at_a_time or changed or due, changed, behind, self._count)

    def published(self, t: float, contact: bool) -> None:
        """Note that the outputs of the sample stamped ``t`` [s] were published."""
        self._published_t, self._published_contact = t, bool(contact)

    def batch_done(self) -> None:
        """Note the end of a batch (the node publishes its newest sample then)."""
        self._count = 0
