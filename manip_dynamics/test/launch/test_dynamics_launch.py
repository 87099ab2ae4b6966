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
import sys
import unittest

import pytest

pytest.importorskip('launch_testing', reason='launch_testing not installed (not on PyPI); '
                    'run on a ROS 2 install')

# launch_test loads this file without its folder on sys.path; launch_support lives there.
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import launch_support  # noqa: E402, I100
import launch_testing.asserts  # noqa: E402
from launch_testing_ros import WaitForTopics  # noqa: E402
import numpy as np  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from manip_dynamics import RobotModel  # noqa: E402
from manip_dynamics_interfaces.srv import InverseDynamics  # noqa: E402

URDF = launch_support.share_path('urdf', 'cobot7.urdf')
Q = [0.2, -0.4, 0.3, -1.8, 0.5, 1.6, 0.4]


@pytest.mark.rostest
def generate_test_description():
    """Include dynamics.launch.py with the default arm and signal readiness."""
    return launch_support.include_launch_file('dynamics.launch.py', {'urdf': URDF})


class TestDynamicsLaunch(unittest.TestCase):
    """The launched node serves the library's numbers."""

    @classmethod
    def setUpClass(cls):
        """Create the test node and a joint_states publisher running in a thread."""
        cls.node = launch_support.create_test_node('test_dynamics_launch')
        cls.model = RobotModel.from_urdf_file(URDF)
        names = list(cls.model.joint_names)
        cls.timer = launch_support.publish_joint_states(cls.node, names[::-1], Q[::-1], 0.05)
        cls.executor = launch_support.spin_in_background(cls.node)

    @classmethod
    def tearDownClass(cls):
        """Stop spinning and shut down."""
        launch_support.stop_test_node(cls.node, cls.executor)

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
        self.assertTrue(launch_support.wait_for_future(future, 30.0),
                        'inverse_dynamics did not answer')
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
