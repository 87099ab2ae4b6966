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
``~/set_payload`` with mass 0 on a link without a payload says so.

Expected values come from what the test sends and the URDF.
"""


import pytest
from ros_test_support import require_interfaces, require_rclpy, spun_node, wait_for_log, wait_until

rclpy = require_rclpy()
srv = require_interfaces()


from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = [pytest.mark.rostest, pytest.mark.slow]


def test_set_payload_of_zero_on_a_link_without_one_says_so(cobot7_xml):
    proc = start_node('dynamics_node', 'payload_zero', {'robot_description': cobot7_xml})
    try:
        wait_for_log(proc, "robot model 'cobot7'")
        with spun_node('payload_zero_probe') as node:
            client = node.create_client(srv.SetPayload, '/payload_zero/set_payload')
            assert client.wait_for_service(timeout_sec=30.0)
            request = srv.SetPayload.Request(link='tool0', mass=0.0)
            future = client.call_async(request)
            wait_until(future.done, 30.0, 'no answer')
            answer = future.result()
    finally:
        stop_node(proc)
    assert answer.success, answer.message
    assert 'had no payload' in answer.message and 'removed' not in answer.message
