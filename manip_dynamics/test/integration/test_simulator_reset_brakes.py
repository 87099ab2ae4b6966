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
After the simulator's ``~/reset``, a command computed at a pose other than the reset pose
(one still in flight from before the reset) does not release the brakes; one that holds
the reset pose does.

Expected values come from what the test sends and the URDF.
"""

import time

import numpy as np
import pytest
from ros_test_support import (read_log, require_interfaces, require_rclpy, send_until_logged,
                              spun_node, wait_for_log, wait_until)

rclpy = require_rclpy()
require_interfaces()

from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]


def test_reset_releases_the_brakes_only_on_a_command_that_holds_the_reset_pose(cobot7_xml):
    model = RobotModel.from_urdf_string(cobot7_xml)
    proc = start_node('simulator_node', 'sim_reset_release', {
        'robot_description': cobot7_xml, 'brakes': True, 'publish_clock': False,
        'controller_name': 'reset_release_controller', 'command_timeout': 5.0},
        remaps=('/joint_states:=/sim_reset_release/joint_states',))
    try:
        wait_for_log(proc, "simulating 'cobot7'")
        with spun_node('reset_release_probe') as node:
            states = []
            node.create_subscription(JointState, '/sim_reset_release/joint_states',
                                     lambda m: states.append(np.array(m.position)), 100)
            pub = node.create_publisher(Float64MultiArray,
                                        '/reset_release_controller/commands', 10)
            client = node.create_client(Trigger, '/sim_reset_release/reset')
            assert client.wait_for_service(timeout_sec=30.0)
            wait_until(lambda: states, 30.0, 'no joint_states')
            q0 = states[-1].copy()
            hold = model.gravity_torques(q0)
            pushed = model.gravity_torques(q0 + 0.05)  # computed at another pose
            wait_until(lambda: pub.get_subscription_count() > 0, 30.0, 'no subscription')

            def send_until(values, text):
                send_until_logged(proc, pub, Float64MultiArray(data=[float(v) for v in values]),
                                  text, timeout=20.0, period=0.02)
            send_until(hold, 'brakes released')  # engaged: the arm is held by g(q0)
            future = client.call_async(Trigger.Request())
            wait_until(future.done, 30.0, 'no answer from ~/reset')
            assert future.result().success, future.result().message
            released = read_log(proc).count('brakes released')
            # a command computed before the reset, at the pushed pose: refused for 0.3 s
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                pub.publish(Float64MultiArray(data=[float(v) for v in pushed]))
                time.sleep(0.02)
            log = read_log(proc)
            assert log.count('brakes released') == released, log
            assert 'brakes stay on after the reset' in log, log
            n = len(states)
            time.sleep(0.3)
            held = np.array(states[n:])
            assert held.size and np.max(np.abs(held - q0)) == 0.0, 'the arm moved while braked'
            send_until(hold, 'holds the reset pose')
            n = len(states)
            end = time.monotonic() + 1.0
            while time.monotonic() < end:  # the compensation keeps commanding g(q0)
                pub.publish(Float64MultiArray(data=[float(v) for v in hold]))
                time.sleep(0.01)
            drift = np.max(np.abs(np.array(states[n:]) - q0))
            assert drift < 1e-3, 'released with g(q0): drift %.3g rad' % drift
    finally:
        stop_node(proc)
