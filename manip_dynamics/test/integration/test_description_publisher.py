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
description_publisher offers /robot_description to a late subscriber (transient local)
and refuses a description that does not load.

Expected values come from what the test sends and the URDF.
"""

import time

import pytest
from ros_test_support import (exit_code_and_log, read_log, require_interfaces, require_rclpy,
                              spun_node, wait_for_log, wait_until)

rclpy = require_rclpy()
require_interfaces()

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402, I100
from std_msgs.msg import String  # noqa: E402

from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]


def test_description_publisher_serves_a_late_subscriber(cobot7_xml):
    proc = start_node('description_publisher', 'description_publisher_test',
                      {'robot_description': cobot7_xml},
                      remaps=('/robot_description:=/description_test/robot_description',))
    try:
        wait_for_log(proc, 'publishing /description_test/robot_description', 60.0)
        time.sleep(0.5)  # a late subscriber
        received = []
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        with spun_node('description_probe') as node:
            node.create_subscription(String, '/description_test/robot_description',
                                     received.append, qos)
            wait_until(lambda: received, 30.0, 'no /robot_description')
        assert received[0].data == cobot7_xml
    finally:
        stop_node(proc)
    assert proc.returncode in (0, -2), read_log(proc)


def test_description_publisher_refuses_an_unusable_description():
    proc = start_node('description_publisher', 'description_publisher_bad',
                      {'robot_description': '<robot name="x"><link name="a"'})
    code, log = exit_code_and_log(proc, 60.0)
    assert code == 1 and 'cannot start: robot_description' in log, log
    assert 'Traceback' not in log, log
