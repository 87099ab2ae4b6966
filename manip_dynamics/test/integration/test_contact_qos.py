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
A brief contact flag survives a subscriber that does not read for ``MAX_CONTACT_AGE``.

The observer publishes ``~/contact`` once per batch of joint states and where the flag
changes, so a contact of a few samples is one raised message between lowered ones.
feedforward_filter and trajectory_controller read it on a lane that waits while their
executor callbacks run; with ten messages kept, the raised one is overwritten after 20 ms at
500 Hz (by hand, behind the real controller_manager, a push flagged for 8 ms did not stop
its goal: the likely cause). Here nobody reads while the publisher sends one raised message
and then every lowered message of ``MAX_CONTACT_AGE`` at 1 kHz; the reader must still find
the raised one. The old depth of 10 loses it in the same run: the stall is real.
"""

import time

import pytest
from ros_test_support import require_interfaces, require_rclpy, wait_until

rclpy = require_rclpy()
require_interfaces()

from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402, I100

from manip_dynamics.observers import MAX_CONTACT_AGE  # noqa: E402
from manip_dynamics.ros.runtime.qos import CONTACT_QOS  # noqa: E402
from manip_dynamics_interfaces.msg import Contact  # noqa: E402

pytestmark = [pytest.mark.rostest]

#: The suite's top joint-state rate [Hz]: one contact message per sample at most.
RATE = 1000.0


def raised_one_read(subscriber_qos: QoSProfile, publisher_qos: QoSProfile) -> tuple[bool, int]:
    """
    Publish 1 raised and ``MAX_CONTACT_AGE * RATE`` lowered flags unread, then read.

    :return: Whether the raised message was read, and how many messages were read.
    """
    from rclpy.executors import SingleThreadedExecutor
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node('contact_qos_probe', context=context)
        read = []
        node.create_subscription(Contact, '/contact_qos/contact',
                                 lambda msg: read.append(msg.contact), subscriber_qos)
        pub = node.create_publisher(Contact, '/contact_qos/contact', publisher_qos)
        wait_until(lambda: pub.get_subscription_count(), 10.0, 'the reader was not matched')
        lowered = int(MAX_CONTACT_AGE * RATE)
        pub.publish(Contact(contact=True))
        for _ in range(lowered):
            pub.publish(Contact(contact=False))
        # nobody has read yet (the node is not spun): let the middleware deliver, then read
        time.sleep(0.5)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and len(read) < lowered + 1:
            executor.spin_once(timeout_sec=0.05)
        executor.shutdown()
        node.destroy_node()
        return (True in read), len(read)
    finally:
        rclpy.try_shutdown(context=context)


def test_the_raised_flag_outlives_a_stall_of_the_acting_window():
    raised, count = raised_one_read(CONTACT_QOS, CONTACT_QOS)
    assert raised, 'the raised flag was lost: %d of %d messages read' % (
        count, int(MAX_CONTACT_AGE * RATE) + 1)


def test_ten_kept_lose_it():
    ten = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    raised, count = raised_one_read(ten, ten)
    assert not raised and count <= 20, (raised, count)
