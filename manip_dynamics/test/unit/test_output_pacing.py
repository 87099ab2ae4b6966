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

"""When a per-sample node publishes within a batch: flag changes, long batches, behind."""

from manip_dynamics.ros.runtime.output_pacing import BatchPacing


def feed(pacing, stamps, contacts, one_at_a_time=False):
    """Run one batch; publish what the decisions say; return the decisions."""
    out = []
    for t, c in zip(stamps, contacts):
        d = pacing.sample(t, c, one_at_a_time)
        if d.publish:
            pacing.published(t, c)
        out.append(d)
    return out


def test_a_short_batch_publishes_only_at_its_end():
    pacing = BatchPacing(0.02, 0.1)
    pacing.published(0.0, False)   # the previous batch's newest
    decisions = feed(pacing, [0.002 * k for k in range(1, 6)], [False] * 5)
    assert [d.publish for d in decisions] == [False] * 5
    assert all(d.behind == 0.0 for d in decisions)


def test_a_flag_that_rises_and_falls_within_a_batch_is_published_both_times():
    pacing = BatchPacing(0.02, 0.1)
    decisions = feed(pacing, [0.0, 0.002, 0.004, 0.006], [False, True, True, False])
    assert [d.publish for d in decisions] == [False, True, False, True]
    assert [d.changed for d in decisions] == [False, True, False, True]


def test_a_batch_that_goes_on_publishes_every_period_and_says_it_is_behind():
    pacing = BatchPacing(0.02, 0.1)
    stamps = [0.002 * k for k in range(101)]   # 0.2 s of samples taken in one go
    decisions = feed(pacing, stamps, [False] * len(stamps))
    published = [t for t, d in zip(stamps, decisions) if d.publish]
    gaps = [b - a for a, b in zip(published, published[1:])]
    assert len(published) >= 9 and max(gaps) <= 0.02 + 0.002 + 1e-9
    behind = [t for t, d in zip(stamps, decisions) if d.behind]
    assert behind and min(behind) >= 0.1   # not before the batch spans 0.1 s
    assert all(abs(d.behind - t) < 1e-9 for t, d in zip(stamps, decisions) if d.behind)


def test_a_batch_after_a_stall_is_published_early_but_not_behind():
    pacing = BatchPacing(0.02, 0.1)
    feed(pacing, [0.0], [False])
    pacing.batch_done()
    pacing.published(0.0, False)
    # the node stalled 50 ms: 25 samples wait, then are taken in one batch of 50 ms
    stamps = [0.05 + 0.002 * k for k in range(25)]
    decisions = feed(pacing, stamps, [False] * 25)
    assert decisions[1].publish   # already 20 ms since the last publication
    assert all(d.behind == 0.0 for d in decisions)


def test_one_message_at_a_time_publishes_every_sample():
    pacing = BatchPacing(0.02, 0.1)
    for k in range(5):
        assert pacing.sample(0.001 * k, False, True).publish
        pacing.batch_done()
