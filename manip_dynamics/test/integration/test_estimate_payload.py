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
dynamics_node's ``~/estimate_payload`` and the ``joint_dynamics.*`` parameters, over DDS.

The node gets cobot7 from its robot_description parameter and a friction override through
``joint_dynamics.*`` (the YAML ``manip-dynamics identify fit`` writes).  This test publishes
joint_states of the arm held still in five poses with a 1.5 kg payload on tool0: efforts
are the loaded model's gravity torques (the library's RNEA with the payload lumped in, an
independent path from the regressor the estimator uses).  The estimate must come within
2 % in mass and 5 mm in centre of mass, and with ``apply`` the node's inverse dynamics
must then include it.
"""

import time

import numpy as np
import pytest
from ros_test_support import require_interfaces, require_rclpy, STARTUP_TIMEOUT

rclpy = require_rclpy()
srv = require_interfaces()
if not hasattr(srv, 'EstimatePayload'):
    pytest.skip('manip_dynamics_interfaces was built before EstimatePayload.srv: make build',
                allow_module_level=True)

from builtin_interfaces.msg import Time  # noqa: E402, I100
from sensor_msgs.msg import JointState  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics.bundled import urdf_path  # noqa: E402
from manip_dynamics.ros.runtime.node_process import start_node, stop_node  # noqa: E402

pytestmark = pytest.mark.rostest

NODE = '/md_test_payload'
TOPIC = '/md_test_payload_joint_states'
COBOT7 = open(urdf_path('cobot7'), encoding='utf-8').read()
MODEL = RobotModel.from_urdf_string(COBOT7)
NAMES = list(MODEL.joint_names)
DAMPING = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
POSES = np.array([[0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.0],
                  [0.5, 0.2, -0.4, -1.5, 0.8, 2.0, 1.0],
                  [-0.7, -0.6, 0.6, -2.4, -1.0, 1.2, -1.2],
                  [0.2, 0.4, 0.1, -1.0, 1.5, 0.8, 2.0],
                  [1.0, -0.1, -0.8, -2.6, 0.4, 2.6, -0.5]])


def _call(node, executor, srv_type, name, request):
    client = node.create_client(srv_type, NODE + '/' + name)
    assert client.wait_for_service(timeout_sec=STARTUP_TIMEOUT), name + ' not offered'
    future = client.call_async(request)
    executor.spin_until_future_complete(future, timeout_sec=30.0)
    assert future.done(), name + ' did not answer'
    return future.result()


def test_estimate_payload_and_joint_dynamics_parameters():
    process = start_node('dynamics_node', 'md_test_payload', {
        'robot_description': COBOT7, 'joint_states_topic': TOPIC,
        'joint_dynamics.joint_names': NAMES, 'joint_dynamics.damping': DAMPING})
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('md_test_payload_client', context=context)
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        # the friction override is in the node's model
        qd = np.linspace(0.1, 0.7, 7)
        answer = _call(node, executor, srv.InverseDynamics, 'inverse_dynamics',
                       srv.InverseDynamics.Request(positions=[0.0] * 7, velocities=list(qd),
                                                   include_friction=True))
        assert answer.success, answer.message
        expected = MODEL.with_joint_dynamics(damping=dict(zip(NAMES, DAMPING))
                                             ).inverse_dynamics(np.zeros(7), qd, np.zeros(7),
                                                                include_friction=True)
        np.testing.assert_allclose(answer.efforts, expected, atol=1e-9)

        loaded = RobotModel.from_urdf_string(COBOT7)
        com = np.array([0.05, 0.0, 0.04])
        loaded.set_payload('tool0', 1.5, com)
        publisher = node.create_publisher(JointState, TOPIC, 10)
        time.sleep(1.0)
        stamp = 100.0
        for q in POSES:
            effort = loaded.gravity_torques(q)
            for _ in range(5):
                stamp += 0.01
                msg = JointState(name=NAMES, position=list(q), velocity=[0.0] * 7,
                                 effort=list(effort))
                msg.header.stamp = Time(sec=int(stamp), nanosec=int((stamp % 1) * 1e9))
                publisher.publish(msg)
                end = time.monotonic() + 0.02
                while time.monotonic() < end:
                    executor.spin_once(timeout_sec=0.005)
        time.sleep(0.5)
        bad = _call(node, executor, srv.EstimatePayload, 'estimate_payload',
                    srv.EstimatePayload.Request(link='no_such_link', window_seconds=10.0))
        assert not bad.success and 'no_such_link' in bad.message
        answer = _call(node, executor, srv.EstimatePayload, 'estimate_payload',
                       srv.EstimatePayload.Request(link='tool0', window_seconds=10.0,
                                                   apply=True))
        assert answer.success, answer.message
        assert answer.samples >= 10
        assert not answer.inertia_estimated
        assert abs(answer.mass - 1.5) <= 0.03
        got = np.array([answer.center_of_mass.x, answer.center_of_mass.y,
                        answer.center_of_mass.z])
        assert np.linalg.norm(got - com) <= 5e-3
        # applied: the node's gravity torques now carry the payload
        q = POSES[1]
        answer = _call(node, executor, srv.InverseDynamics, 'inverse_dynamics',
                       srv.InverseDynamics.Request(positions=list(q)))
        np.testing.assert_allclose(answer.efforts, loaded.gravity_torques(q), atol=1e-2)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
        stop_node(process, timeout=15.0)
