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
The observer's ``command_delay``: a joint state is paired with the command sent that long
before it (effort_source commands), as control.launch.py sets it behind a controller_manager
with observer_effort_source:=commands (hardware without an effort state).

The arm stands still at q (joint states at 250 Hz, velocity 0); the commands are g(q) (what
holds it: no external torque), then switch to g(q) + 5 N m on joint 2, which the still arm
reads as an external torque. Without a delay the contact flag rises within a few samples of
the switch; with ``command_delay`` 0.1 s (its upper bound) it cannot rise before 0.1 s have passed.

The first is measured in the samples' own time (the stamps advance 4 ms per sample whatever the
machine does, and the flagged sample's stamp is in the contact message), so a stall of the
observer or of this probe on a loaded machine cannot make it late; the second in reception time
(a stall only makes the flag later).
"""

import time

import numpy as np
import pytest
from ros_test_support import (read_log, require_interfaces, require_rclpy, spun_node,
                              STARTUP_TIMEOUT, wait_until)

rclpy = require_rclpy()
require_interfaces()

from sensor_msgs.msg import JointState  # noqa: E402, I100
from std_msgs.msg import Float64MultiArray  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402
from manip_dynamics_interfaces.msg import Contact  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow, pytest.mark.realtime]
Q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


PERIOD = 0.004


def contact_delay(name: str, command_delay: float) -> tuple[float, float]:
    """
    Return the delay from the command switch to the first contact flag, twice [s].

    First in the stamps (the flagged sample's stamp minus the stamp of the first sample sent
    after the switch), then in reception time (the flag's arrival minus the switch).
    """
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        xml = stream.read()
    model = RobotModel.from_urdf_string(xml)
    proc = start_node('external_torque_observer', name, {
        'robot_description': xml, 'effort_source': 'commands',
        'commands_topic': '/%s/commands' % name, 'joint_states_topic': '/%s/states' % name,
        'command_delay': command_delay, 'subtract_friction': False})
    try:
        try:
            wait_until(lambda: 'observing' in read_log(proc), STARTUP_TIMEOUT, 'no start')
        except AssertionError:
            raise AssertionError('the observer did not start: %s' % read_log(proc)) from None
        with spun_node(name + '_probe') as node:
            contacts = []
            node.create_subscription(Contact, '/%s/contact' % name,
                                     lambda m: contacts.append((
                                         time.monotonic(), m.contact,
                                         m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec)),
                                     100)
            states = node.create_publisher(JointState, '/%s/states' % name, 10)
            commands = node.create_publisher(Float64MultiArray, '/%s/commands' % name, 10)
            wait_until(lambda: states.get_subscription_count() and
                       commands.get_subscription_count(), 30.0, 'no subscriptions')
            hold = model.gravity_torques(Q)
            pushed = hold + np.array([0.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0])
            names = list(model.joint_names)
            switch = switch_stamp = None
            start = time.monotonic()
            first = node.get_clock().now().nanoseconds
            sample = 0
            while time.monotonic() - start < 4.0:
                now = time.monotonic()
                sample += 1
                stamp_ns = first + int(sample * PERIOD * 1e9)
                if switch is None and now - start > 1.5 and len(contacts) > 50:
                    assert not any(c for _, c, _ in contacts), 'contact before the switch'
                    switch, switch_stamp = now, stamp_ns * 1e-9
                tau = hold if switch is None else pushed
                commands.publish(Float64MultiArray(data=tau.tolist()))
                msg = JointState(name=names, position=Q.tolist(), velocity=[0.0] * 7)
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 10**9)
                states.publish(msg)
                time.sleep(PERIOD)
            assert switch is not None, 'the observer published no contact messages'
            flagged = [(t, s) for t, c, s in contacts if c and t > switch]
            assert flagged, 'no contact after the switch: %s' % read_log(proc)
            return flagged[0][1] - switch_stamp, flagged[0][0] - switch
    finally:
        stop_node(proc)


def test_the_command_delay_pairs_states_with_older_commands():
    in_stamps, _ = contact_delay('ocd_none', 0.0)
    assert 0.0 <= in_stamps < 0.08
    _, received = contact_delay('ocd_late', 0.1)
    assert received >= 0.1
