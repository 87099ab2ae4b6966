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
launch_testing test of launch/dynamics.launch.py (needs a ROS 2 install with launch_testing).

Starts the launch file on the bundled default arm, publishes joint states, waits for
~/gravity_torques with WaitForTopics, calls ~/inverse_dynamics and compares both with the
library, then checks that every process exited cleanly. Skipped with the reason where
launch_testing is not importable (the PyPI set-up: launch is not on PyPI).
"""

import os
import threading
import time
import unittest

import pytest

pytest.importorskip('launch_testing', reason='launch_testing not installed (not on PyPI); '
                    'run on a ROS 2 install')

from ament_index_python.packages import get_package_share_directory  # noqa: E402, I100
import launch  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from launch_testing_ros import WaitForTopics  # noqa: E402
import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics_interfaces.srv import InverseDynamics  # noqa: E402

SHARE = get_package_share_directory('manip_dynamics')
URDF = os.path.join(SHARE, 'urdf', 'cobot7.urdf')
Q = [0.2, -0.4, 0.3, -1.8, 0.5, 1.6, 0.4]


@pytest.mark.rostest
def generate_test_description():
    """Include dynamics.launch.py with the default arm and signal readiness."""
    return launch.LaunchDescription([
        launch.actions.IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(SHARE, 'launch', 'dynamics.launch.py')),
            launch_arguments={'urdf': URDF}.items()),
        launch_testing.actions.ReadyToTest(),
    ])


class TestDynamicsLaunch(unittest.TestCase):
    """The launched node serves the library's numbers."""

    @classmethod
    def setUpClass(cls):
        """Create the test node and a joint_states publisher running in a thread."""
        rclpy.init()
        cls.model = RobotModel.from_urdf_file(URDF)
        cls.node = rclpy.create_node('test_dynamics_launch')
        publisher = cls.node.create_publisher(JointState, '/joint_states', 10)
        names = list(cls.model.joint_names)

        def publish():
            msg = JointState(name=names[::-1], position=Q[::-1])
            msg.header.stamp = cls.node.get_clock().now().to_msg()
            publisher.publish(msg)
        cls.node.create_timer(0.05, publish)
        cls.executor = rclpy.executors.SingleThreadedExecutor()
        cls.executor.add_node(cls.node)
        cls.spinner = threading.Thread(target=cls.executor.spin, daemon=True)
        cls.spinner.start()

    @classmethod
    def tearDownClass(cls):
        """Stop spinning and shut down."""
        cls.executor.shutdown()
        cls.node.destroy_node()
        rclpy.try_shutdown()

    def test_gravity_torques_topic(self):
        """~/gravity_torques carries g(q) in model order."""
        topic = '/manip_dynamics/gravity_torques'
        with WaitForTopics([(topic, JointState)], timeout=60.0) as wait:
            msg = wait.received_messages(topic)[-1]
        self.assertEqual(list(msg.name), list(self.model.joint_names))
        np.testing.assert_allclose(msg.effort, self.model.gravity_torques(Q), atol=1e-9)

    def test_inverse_dynamics_service(self):
        """~/inverse_dynamics equals the library's inverse dynamics."""
        client = self.node.create_client(InverseDynamics, '/manip_dynamics/inverse_dynamics')
        self.assertTrue(client.wait_for_service(timeout_sec=60.0))
        future = client.call_async(InverseDynamics.Request(positions=Q, velocities=[0.1] * 7))
        deadline = time.monotonic() + 30.0
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(future.done(), 'inverse_dynamics did not answer')
        response = future.result()
        self.assertTrue(response.success, response.message)
        np.testing.assert_allclose(
            response.efforts, self.model.inverse_dynamics(Q, [0.1] * 7, [0.0] * 7),
            atol=1e-9)


@launch_testing.post_shutdown_test()
class TestDynamicsLaunchShutdown(unittest.TestCase):
    """The node exits cleanly when the launch shuts down."""

    def test_exit_codes(self, proc_info):
        """Every launched process exited with code 0 (SIGINT is a normal shutdown)."""
        launch_testing.asserts.assertExitCodes(proc_info)
