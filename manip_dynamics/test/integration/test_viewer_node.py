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
The viewer node over real DDS (loopback), without a browser.

It serves its page on 127.0.0.1 (the URL it prints answers over HTTP with the web client),
survives bad joint_states, answers ~/set_payload (an unknown link: ``success: false``),
follows a new /robot_description, and exits 0 on SIGINT.
"""

import re
import time
import urllib.request

import pytest
from ros_test_support import (
    read_log, require_interfaces, require_rclpy, spun_node, STARTUP_TIMEOUT, wait_until)

rclpy = require_rclpy()
srv = require_interfaces()
pytest.importorskip('viser', reason='viser (the [viewer] extra) is not installed')

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]


def test_viewer_node_serves_follows_and_survives_bad_input(tmp_path) -> None:
    with open(urdf_path('cobot7')) as stream:
        cobot7 = stream.read()
    with open(urdf_path('planar_2r')) as stream:
        planar = stream.read()
    proc = start_node('viewer_node', 'viewer', {'port': 0}, log_dir=str(tmp_path))
    try:
        with spun_node('viewer_probe') as node:
            description = node.create_publisher(String, '/robot_description', QoSProfile(
                depth=1, reliability=ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.TRANSIENT_LOCAL))
            description.publish(String(data=cobot7))
            url = wait_until(
                lambda: re.search(r'open (http://127\.0\.0\.1:\d+)', read_log(proc)),
                STARTUP_TIMEOUT, 'timed out waiting for the viewer URL').group(1)
            with urllib.request.urlopen(url, timeout=10) as reply:
                assert b'<html' in reply.read().lower()
            wait_until(lambda: "robot model 'cobot7'" in read_log(proc), STARTUP_TIMEOUT,
                       'timed out waiting for the model from /robot_description')

            joint_states = node.create_publisher(JointState, '/joint_states', 10)
            names = ['cobot7_joint%d' % (i + 1) for i in range(7)]
            wait_until(lambda: joint_states.get_subscription_count() > 0, 30.0,
                       'timed out waiting for the subscription')

            def sent() -> bool:
                # again until the NaN is logged: the viewer may not have matched us yet
                for msg in (JointState(name=names[:3], position=[0.0] * 3),      # missing
                            JointState(name=names, position=[float('nan')] * 7),  # NaN
                            JointState(name=names, position=[0.1] * 7)):          # good
                    joint_states.publish(msg)
                    time.sleep(0.3)
                return 'is nan' in read_log(proc)
            wait_until(sent, 10.0, 'timed out waiting for the NaN warning')
            # still alive after a message with joints missing and NaN
            assert proc.poll() is None, read_log(proc)

            client = node.create_client(srv.SetPayload, '/viewer/set_payload')
            assert client.wait_for_service(timeout_sec=STARTUP_TIMEOUT)
            for link, ok in (('no_such_link', False), ('cobot7_flange', True)):
                future = client.call_async(srv.SetPayload.Request(link=link, mass=1.5))
                wait_until(future.done, 10.0, 'timed out waiting for the answer of ~/set_payload')
                assert future.result().success is ok, future.result().message

            description.publish(String(data=planar))
            wait_until(lambda: "robot model 'planar_2r'" in read_log(proc), 30.0,
                       'timed out waiting for the new model from /robot_description')
            assert 'dropped the payload' in read_log(proc)  # planar_2r has no cobot7_flange
            assert proc.poll() is None, read_log(proc)
    finally:
        code = stop_node(proc)
    assert code == 0, read_log(proc)
