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
One namespaced arm's joint states and contact flags, as a test node receives them.

Shared by the two-arm test behind the controller_manager stand-in
(test/integration/test_two_arms_namespaced.py, in CI) and the one through two
``ros2 launch manip_dynamics control.launch.py namespace:=...`` behind the real
controller_manager (test/launch/test_two_arms_control_launch.py, by hand).
"""

import threading
import time

import numpy as np
from sensor_msgs.msg import JointState

from manip_dynamics.ros.runtime.conversions import stamp_seconds
from manip_dynamics.ros.runtime.qos import CONTACT_QOS
from manip_dynamics_interfaces.msg import Contact


class ArmWatch:
    """One arm's joint states and contact flags, as the test node ``node`` receives them."""

    def __init__(self, node, namespace: str) -> None:
        self.lock = threading.Lock()
        self.states: list = []
        self.names: list = []
        self.contacts: list = []
        node.create_subscription(JointState, '/%s/joint_states' % namespace, self._state, 100)
        node.create_subscription(Contact, '/%s/external_torque_observer/contact' % namespace,
                                 self._contact, CONTACT_QOS)

    def _state(self, msg) -> None:
        with self.lock:
            self.names = list(msg.name)
            self.states.append((time.monotonic(), np.array(msg.position)))

    def _contact(self, msg) -> None:
        with self.lock:
            self.contacts.append((time.monotonic(), bool(msg.contact),
                                  stamp_seconds(msg.header.stamp)))

    def positions_since(self, since: float) -> np.ndarray:
        with self.lock:
            return np.array([q for t, q in self.states if t >= since])

    def flagged_since(self, since: float) -> bool:
        with self.lock:
            return any(c for t, c, _ in self.contacts if t >= since)

    def rises_stamped(self) -> list:
        """Return the stamps [s] of the flagged messages received."""
        with self.lock:
            return [stamp for _, c, stamp in self.contacts if c]

    def newest_stamp(self) -> float:
        with self.lock:
            return self.contacts[-1][2] if self.contacts else 0.0


def push_in_turn(probe, watches: dict, arms, force: float, duration: float,
                 window: float) -> dict:
    """
    Push each arm's link in turn (its simulator's ``apply_wrench``); check the flags apart.

    Each push is ``force`` N down (``-z`` of the world) for ``duration`` s; a push's flags
    are those stamped from its request to ``window`` s after the answer (stamps: the joint
    states' clock, the system time the probe's clock reads too). Asserts that each arm
    flagged its own push and nothing outside it (the other arm's push included).

    :param probe: The test node (spun by another thread).
    :param watches: Namespace -> :class:`ArmWatch`.
    :param arms: (namespace, robot, pushed link) per arm, in push order.
    :return: Namespace -> (flagged messages in its window, first one after the request [s]
        or None, flagged messages outside).
    """
    from manip_dynamics_interfaces.srv import ApplyWrench
    from ros_test_support import call_service, wait_until

    def now() -> float:
        return probe.get_clock().now().nanoseconds * 1e-9
    before = {ns: len(watches[ns].rises_stamped()) for ns, _, _ in arms}
    spans = {}
    for pushed, _, link in arms:
        request = ApplyWrench.Request(link=link, frame='world', duration=duration)
        request.wrench.force.z = -force
        asked = now()
        answer = call_service(probe, ApplyWrench, '/%s/simulator/apply_wrench' % pushed,
                              request, 10.0)
        assert answer.success, answer.message
        spans[pushed] = (asked, now() + window)
        watch = watches[pushed]
        # every message of the push and its decay received, then a pause before the next
        # arm's push (so that its window does not hold this one)
        wait_until(lambda: watch.newest_stamp() >= spans[pushed][1], 20.0,
                   '%s: the observer fell silent after the push' % pushed)
        time.sleep(1.0)
    out = {}
    for namespace, _, _ in arms:
        rises = watches[namespace].rises_stamped()[before[namespace]:]
        first, last = spans[namespace]
        own = [t for t in rises if first <= t <= last]
        out[namespace] = (len(own), own[0] - first if own else None, len(rises) - len(own))
        print('%s: flagged %s after the request, %d flagged messages in its window, %d '
              'outside' % (namespace, '%.1f ms' % (1e3 * out[namespace][1]) if own else 'never',
                           len(own), len(rises) - len(own)))
    for namespace, (own, _, outside) in out.items():
        assert own, '%s: its push was not flagged' % namespace
        assert not outside, '%s flagged %d messages outside its push (%.3f to %.3f s)' % (
            namespace, outside, *spans[namespace])
    return out
