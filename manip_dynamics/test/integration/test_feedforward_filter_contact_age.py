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
Which contact flags feedforward_filter acts on: those of the running plan, however late.

The rule is read from the node's own decision (its ``_fresh``) on the joint states' clock:
a flag stamped before the running plan was sent on speaks of another motion; one stamped
during it counts even when the observer's output trails the joint states by a few tenths of
a second (by hand, behind the real controller_manager with a busy core, up to 0.25 s: a
flag judged by age alone against 0.1 s came after the push had ended); one older than
``max_contact_age`` does not.
"""

from types import SimpleNamespace

import pytest
from ros_test_support import require_interfaces, require_rclpy

require_rclpy()
require_interfaces()

from manip_dynamics.observers import MAX_CONTACT_AGE  # noqa: E402, I100
from manip_dynamics.ros.nodes.feedforward_filter import FeedforwardFilterNode  # noqa: E402
from manip_dynamics_interfaces.msg import Contact  # noqa: E402

pytestmark = [pytest.mark.rostest]


def flag(stamp: float) -> Contact:
    """Return a raised contact flag stamped ``stamp`` [s]."""
    msg = Contact(contact=True)
    msg.header.stamp.sec = int(stamp)
    msg.header.stamp.nanosec = int(round((stamp - int(stamp)) * 1e9))
    return msg


def test_a_flag_counts_from_the_plan_start_within_the_age_bound():
    plan_sent = 100.0
    newest_state = 100.6
    node = SimpleNamespace(_stamp=newest_state, _contact_since=plan_sent,
                           p=SimpleNamespace(max_contact_age=MAX_CONTACT_AGE))

    def fresh(stamp: float) -> bool:
        return FeedforwardFilterNode._fresh(node, flag(stamp))
    assert MAX_CONTACT_AGE >= 0.5   # twice the lag measured by hand
    # during the plan, 0.3 s behind the newest joint state: acted on
    assert fresh(newest_state - 0.3)
    # before the plan was sent on: another motion's flag, however recent
    assert not fresh(plan_sent - 0.01)
    # older than the bound: not acted on, even during the plan
    node._contact_since = 0.0
    assert not fresh(newest_state - MAX_CONTACT_AGE - 0.01)
    assert fresh(newest_state - MAX_CONTACT_AGE + 0.01)


def test_a_flag_of_the_running_plan_too_old_to_act_on_is_reported():
    # a stop that did not happen is said in the log (throttled), not dropped silently
    warned, deferred = [], []
    node = SimpleNamespace(
        _stamp=102.0, _contact_since=100.0, p=SimpleNamespace(max_contact_age=MAX_CONTACT_AGE),
        _rehold=False,
        _late_flags=SimpleNamespace(warning=lambda text, kind=None: warned.append(text)),
        _defer=lambda *args: deferred.append(args), _busy=lambda: True, _contact_acted=None)
    node._fresh = lambda msg: FeedforwardFilterNode._fresh(node, msg)
    node._late_flag = lambda msg, why: FeedforwardFilterNode._late_flag(node, msg, why)
    assert MAX_CONTACT_AGE < 1.9
    FeedforwardFilterNode._contact(node, flag(102.0 - MAX_CONTACT_AGE - 0.05))
    assert not deferred and len(warned) == 1 and 'not acted on' in warned[0], warned
    # another motion's flag (before the plan was sent on): ignored without a word
    FeedforwardFilterNode._contact(node, flag(99.9))
    assert len(warned) == 1 and not deferred
    # a fresh one: acted on
    FeedforwardFilterNode._contact(node, flag(101.9))
    assert len(deferred) == 1 and len(warned) == 1
